import { expect } from "chai";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";

/**
 * Internal callers use gRPC directly: a stock @grpc/grpc-js client against the
 * catalog service, which must demand the service token.
 */
describe("catalog service over gRPC (@grpc/grpc-js)", () => {
  let client: any;
  let merchantId: string;

  const sys = useTestSystem({ workerGroups: [], gateway: true });
  before(async () => {
    merchantId = (await sys.createMerchant()).id;
    const definition = protoLoader.loadSync(path.resolve("proto/billing/catalog/v1/catalog.proto"), {
      includeDirs: [path.resolve("proto")],
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    client = new pkg.billing.catalog.v1.CatalogService(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
  });

  const call = (method: string, request: object, metadata = new grpc.Metadata()) =>
    new Promise<any>((resolve, reject) => client[method](request, metadata, (err: grpc.ServiceError | null, res: any) => (err ? reject(err) : resolve(res))));

  const authed = (token = sys.config.internalApiToken) => {
    const md = new grpc.Metadata();
    md.set("authorization", `Bearer ${token}`);
    return md;
  };

  const request = {
    merchantId: "",
    name: "gRPC plan",
    amount: "12.340",
    currency: "USD",
    interval: "INTERVAL_MONTH",
    intervalCount: 1,
    trialDays: 0,
    metadataJson: "{}",
  };

  it("refuses a call without the service token (UNAUTHENTICATED)", async () => {
    const err = await call("CreatePlan", { ...request, merchantId }).catch((e) => e);
    expect(err.code).to.equal(grpc.status.UNAUTHENTICATED);
    const wrong = await call("CreatePlan", { ...request, merchantId }, authed("not-the-token-at-all")).catch((e) => e);
    expect(wrong.code).to.equal(grpc.status.UNAUTHENTICATED);
    const rows = await sys.sql("select count(*)::int as n from plans");
    expect(rows[0].n).to.equal(0);
  });

  it("creates and reads a plan with the token, scoped to the merchant", async () => {
    const created = await call("CreatePlan", { ...request, merchantId }, authed());
    expect(created.plan.amount).to.equal("12.34");
    expect(created.plan.interval).to.equal("INTERVAL_MONTH");
    const got = await call("GetPlan", { merchantId, id: created.plan.id }, authed());
    expect(got.plan.name).to.equal("gRPC plan");
    const otherMerchant = (await sys.createMerchant("Other")).id;
    const other = await call("GetPlan", { merchantId: otherMerchant, id: created.plan.id }, authed()).catch((e) => e);
    expect(other.code).to.equal(grpc.status.NOT_FOUND);
    expect(other.metadata.get("billing-error-code")).to.deep.equal(["PLAN_NOT_FOUND"]);
    // A merchant that does not exist at all is NOT_FOUND too, named as such.
    const unknown = await call("GetPlan", { merchantId: "00000000-0000-4000-8000-000000000000", id: created.plan.id }, authed()).catch((e) => e);
    expect(unknown.code).to.equal(grpc.status.NOT_FOUND);
    expect(unknown.metadata.get("billing-error-code")).to.deep.equal(["MERCHANT_NOT_FOUND"]);
  });

  it("maps domain validation to INVALID_ARGUMENT", async () => {
    const err = await call("CreatePlan", { ...request, merchantId, amount: "1e5" }, authed()).catch((e) => e);
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.contain("amount");
  });
});
