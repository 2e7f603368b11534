import { expect } from "chai";
import { redactPath } from "../../gateway/middleware/access-log.ts";

describe("access log", () => {
  it("never logs approval tokens carried in hosted-page paths", () => {
    expect(redactPath("/authorize/AbC_123-xyz")).to.equal("/authorize/[token]");
    expect(redactPath("/authorize/AbC_123-xyz/pin")).to.equal("/authorize/[token]/pin");
    expect(redactPath("/api/v1/subscription-plans/123")).to.equal("/api/v1/subscription-plans/123");
  });
});
