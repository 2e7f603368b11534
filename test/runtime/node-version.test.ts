import { expect } from "chai";

describe("runtime", () => {
  it("runs on Node.js 24 (a silent fall-back to the machine's Node 20 must fail)", () => {
    expect(Number(process.versions.node.split(".")[0])).to.equal(24);
  });
});
