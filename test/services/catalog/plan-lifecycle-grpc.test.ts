import { expect } from "chai";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";
import { make } from "../../support/factories/index.ts";

/** UpdatePlan / ArchivePlan / UnarchivePlan for internal callers: a stock @grpc/grpc-js client, validated input. */
describe("catalog plan lifecycle over gRPC (@grpc/grpc-js)", () => {
  let client: any;
  let merchantId: string;

  const sys = useTestSystem({ workerGroups: [], gateway: false });
  before(async () => {
    merchantId = (await make.merchant(sys, { name: "gRPC" })).id;
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

  const call = (method: string, request: object) => {
    const md = new grpc.Metadata();
    md.set("authorization", `Bearer ${sys.config.internalApiToken}`);
    return new Promise<any>((resolve, reject) => client[method](request, md, (err: grpc.ServiceError | null, res: any) => (err ? reject(err) : resolve(res))));
  };
  const create = async () =>
    (
      await call("CreatePlan", {
        merchantId,
        name: "Base",
        description: "d",
        amount: "5",
        currency: "USD",
        interval: "INTERVAL_MONTH",
        intervalCount: 1,
        trialDays: 0,
        metadataJson: "{}",
      })
    ).plan;

  it("updates only the fields given, clears with the clear flags, keeps the price", async () => {
    const plan = await create();
    const res = await call("UpdatePlan", { merchantId, id: plan.id, name: "Renamed", metadataJson: '{"k":1}', clearDescription: true });
    expect(res.plan).to.include({ name: "Renamed", amount: "5", currency: "USD", metadataJson: '{"k":1}', status: "ACTIVE" });
    expect(res.plan.description ?? null).to.equal(null);
  });

  it("refuses bad input with INVALID_ARGUMENT naming the field, and another merchant's plan with NOT_FOUND", async () => {
    const plan = await create();
    for (const [request, field] of [
      [{ name: "" }, "name"],
      [{ name: "x".repeat(201) }, "name"],
      [{ description: "x".repeat(2001) }, "description"],
      [{ metadataJson: "[1]" }, "metadata"],
    ] as const) {
      const err = await call("UpdatePlan", { merchantId, id: plan.id, ...request }).catch((e) => e);
      expect(err.code, JSON.stringify(request)).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err.details).to.contain(field);
    }
    const other = await call("ArchivePlan", { merchantId: "00000000-0000-4000-8000-000000000000", id: plan.id }).catch((e) => e);
    expect(other.code).to.equal(grpc.status.NOT_FOUND);
    const junk = await call("UnarchivePlan", { merchantId, id: "not-a-uuid" }).catch((e) => e);
    expect(junk.code).to.equal(grpc.status.NOT_FOUND);
  });

  it("archives idempotently and lists by status", async () => {
    const plan = await create();
    const archived = (await call("ArchivePlan", { merchantId, id: plan.id })).plan;
    expect(archived.status).to.equal("ARCHIVED");
    expect(archived.archivedAt).to.not.equal(null);
    expect((await call("ArchivePlan", { merchantId, id: plan.id })).plan.archivedAt).to.deep.equal(archived.archivedAt);
    const listed = await call("ListPlans", { merchantId, limit: 100, status: "ARCHIVED" });
    expect(listed.plans.map((p: { id: string }) => p.id)).to.include(plan.id);
    const bad = await call("ListPlans", { merchantId, status: "DELETED" }).catch((e) => e);
    expect(bad.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((await call("UnarchivePlan", { merchantId, id: plan.id })).plan.status).to.equal("ACTIVE");
  });
});
