import { expect } from "chai";
import { readFile } from "node:fs/promises";
import { EVENT_TYPES } from "../../../services/events/contract.ts";

describe("event types", () => {
  it("are listed in docs/webhooks.md exactly as in services/events/contract.ts (the one list)", async () => {
    const readme = await readFile(new URL("../../../docs/webhooks.md", import.meta.url), "utf8");
    const section = readme.split("### Event types")[1]?.split("\n### ")[0] ?? "";
    const documented = [...section.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((m) => m[1]);
    expect(documented).to.deep.equal([...EVENT_TYPES]);
  });
});
