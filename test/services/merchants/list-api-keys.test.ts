import { expect } from "chai";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";

/**
 * MerchantService.ListApiKeys (the dashboard's API keys page) over gRPC: the
 * merchant's keys only, newest first and keyset-paged, with their last use
 * stamped by authentication at most once a minute; never the key or its digest.
 */
describe("MerchantService.ListApiKeys and the last use of a key", () => {
  let merchants: any;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    const definition = protoLoader.loadSync(path.resolve("proto/billing/merchants/v1/merchants.proto"), {
      includeDirs: [path.resolve("proto")],
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    merchants = new pkg.billing.merchants.v1.MerchantService(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    merchants?.close();
  });

  const call = (method: string, request: object) =>
    new Promise<{ err: grpc.ServiceError | null; res: any }>((resolve) => {
      const md = new grpc.Metadata();
      md.set("authorization", `Bearer ${sys.config.internalApiToken}`);
      merchants[method](request, md, (err: grpc.ServiceError | null, res: unknown) => resolve({ err, res }));
    });

  it("lists only the merchant's keys, newest first, paged, with prefix, last use and revocation, never the key", async () => {
    const acme = await sys.createMerchant("Acme");
    const other = await sys.createMerchant("Other");
    const second = await sys.admin.post(`/admin/v1/merchants/${acme.id}/api-keys`, {});
    expect(second.status, second.text).to.equal(201);

    const first = await call("ListApiKeys", { merchantId: acme.id, limit: 1 });
    expect(first.err).to.equal(null);
    expect(first.res.keys.map((k: any) => k.id)).to.deep.equal([second.body.id]);
    expect(first.res.hasMore).to.equal(true);
    const next = await call("ListApiKeys", { merchantId: acme.id, limit: 1, cursor: first.res.nextCursor });
    expect(next.res.keys.map((k: any) => k.id)).to.deep.equal([acme.apiKeyId]);
    expect(next.res.hasMore).to.equal(false);
    const key = next.res.keys[0];
    expect(key.prefix).to.equal(acme.apiKey.slice(0, 12));
    expect(JSON.stringify(next.res)).not.to.include(acme.apiKey);
    expect((await call("ListApiKeys", { merchantId: other.id })).res.keys.map((k: any) => k.id)).to.deep.equal([other.apiKeyId]);

    // Used once (createMerchant's client has not called yet): stamped; a second use within the minute writes nothing.
    expect((await acme.api.get("/api/v1/subscription-plans")).status).to.equal(200);
    const stampedAt = async () => (await sys.sql(`select last_used_at::text as at from api_keys where id = ?`, [acme.apiKeyId]))[0].at as string | null;
    const stamped = await stampedAt();
    expect(stamped).to.be.a("string");
    const listed = (await call("ListApiKeys", { merchantId: acme.id })).res.keys.find((k: any) => k.id === acme.apiKeyId);
    expect(Number(listed.lastUsedAt.seconds)).to.equal(Math.floor(new Date(stamped!).getTime() / 1000));
    const again = await call("AuthenticateApiKey", { apiKey: acme.apiKey });
    expect(again.err).to.equal(null);
    expect(await stampedAt()).to.equal(stamped);
    expect((await call("ListApiKeys", { merchantId: acme.id })).res.keys.find((k: any) => k.id === second.body.id).lastUsedAt).to.equal(undefined);

    await sys.admin.delete(`/admin/v1/merchants/${acme.id}/api-keys/${second.body.id}`);
    expect((await call("ListApiKeys", { merchantId: acme.id })).res.keys.find((k: any) => k.id === second.body.id).revokedAt).to.have.property("seconds");
  });

  it("validates like every call: a malformed merchant id names merchantId, an unknown merchant is NOT_FOUND, a forged cursor INVALID_ARGUMENT", async () => {
    const bad = await call("ListApiKeys", { merchantId: "nope" });
    expect(bad.err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(bad.err?.details).to.match(/^merchantId: /);
    const missing = await call("ListApiKeys", { merchantId: "00000000-0000-4000-8000-000000000000" });
    expect(missing.err?.code).to.equal(grpc.status.NOT_FOUND);
    expect(missing.err?.metadata.get("billing-error-code")).to.deep.equal(["MERCHANT_NOT_FOUND"]);
    const merchant = await sys.createMerchant();
    const forged = await call("ListApiKeys", { merchantId: merchant.id, cursor: "forged" });
    expect(forged.err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(forged.err?.details).to.match(/^cursor: /);
  });
});
