import { expect } from "chai";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { AUDITED_METHODS, READ, STEP } from "../../services/platform/audit/audited-methods.ts";

const GEN = join(import.meta.dirname, "../../proto/gen/billing");

/** Every service of every generated proto file (a new proto file is found without editing this test). */
async function allServices(): Promise<DescService[]> {
  const services: DescService[] = [];
  for (const domain of readdirSync(GEN)) {
    for (const version of readdirSync(join(GEN, domain))) {
      for (const file of readdirSync(join(GEN, domain, version)).filter((f) => f.endsWith("_pb.ts"))) {
        const mod = (await import(join(GEN, domain, version, file))) as Record<string, unknown>;
        for (const value of Object.values(mod)) if ((value as DescService)?.kind === "service") services.push(value as DescService);
      }
    }
  }
  return services;
}

/** Names that read by convention: a method named so but audited (or the reverse) is worth a second look, not an error. */
const READS_BY_NAME = /^(Get|List|Find|Quote|Check|Verify|Authenticate|AdminList|Export)/;

describe("every RPC method is classified for the audit log", () => {
  it("each method of each service proto has an entry (audited action, read or step)", async () => {
    const services = await allServices();
    expect(services.length).to.be.at.least(11);
    const missing: string[] = [];
    const seen = new Set<string>();
    for (const service of services) {
      for (const method of service.methods) {
        const key = `${service.name}/${method.name}`;
        seen.add(key);
        if (!(key in AUDITED_METHODS)) missing.push(key);
      }
    }
    expect(missing, "add these to services/platform/audit/audited-methods.ts").to.deep.equal([]);
    // And nothing stale: every entry names a method that exists.
    expect(Object.keys(AUDITED_METHODS).filter((k) => !seen.has(k))).to.deep.equal([]);
  });

  it("a method whose name says it changes something is audited (or an explicit step), never a plain read", async () => {
    const readsThatWrite: string[] = [];
    for (const service of await allServices()) {
      for (const method of service.methods) {
        const audit = AUDITED_METHODS[`${service.name}/${method.name}`];
        if (audit === READ && !READS_BY_NAME.test(method.name)) readsThatWrite.push(`${service.name}/${method.name}`);
      }
    }
    expect(readsThatWrite).to.deep.equal([]);
  });

  it("actions are <object type>.<verb>, snake_case, and their object type is the action's prefix", () => {
    for (const [key, audit] of Object.entries(AUDITED_METHODS)) {
      if (audit === READ || audit === STEP) continue;
      expect(audit.action, key).to.match(/^[a-z_]+\.[a-z_]+$/);
      expect(audit.action.startsWith(`${audit.objectType}.`), key).to.equal(true);
    }
  });
});
