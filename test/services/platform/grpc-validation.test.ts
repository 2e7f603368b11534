import { expect } from "chai";
import path from "node:path";
import net from "node:net";
import os from "node:os";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";
import { encodeGrpcMessage } from "../../../services/platform/rpc/grpc-status-text.ts";

/** What a stock @grpc/grpc-js caller sees when its request is wrong. */
describe("RPC input validation and status text (stock @grpc/grpc-js client)", () => {
  let catalog: any;
  let merchantId: string;

  const sys = useTestSystem({ workerGroups: [], gateway: true });
  before(async () => {
    merchantId = (await sys.createMerchant()).id;
    const definition = protoLoader.loadSync(path.resolve("proto/billing/catalog/v1/catalog.proto"), {
      includeDirs: [path.resolve("proto")],
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    catalog = new pkg.billing.catalog.v1.CatalogService(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    catalog?.close();
  });

  const call = (method: string, request: object) =>
    new Promise<grpc.ServiceError>((resolve, reject) => {
      const md = new grpc.Metadata();
      md.set("authorization", `Bearer ${sys.config.internalApiToken}`);
      catalog[method](request, md, (err: grpc.ServiceError | null, res: unknown) =>
        err ? resolve(err) : reject(new Error(`expected an error, got ${JSON.stringify(res)}`)),
      );
    });
  const plan = { name: "gRPC plan", amount: "12.34", currency: "USD", interval: "INTERVAL_MONTH", intervalCount: 1, trialDays: 0, metadataJson: "{}" };

  it("ListPlans with an empty or malformed merchant id: INVALID_ARGUMENT naming merchantId", async () => {
    for (const bad of ["", "not-a-uuid", "0"]) {
      const err = await call("ListPlans", { merchantId: bad });
      expect(err.code, bad).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err.details).to.match(/^merchantId: /);
    }
  });

  it("CreatePlan for a merchant that does not exist: NOT_FOUND, nothing written", async () => {
    const err = await call("CreatePlan", { ...plan, merchantId: "00000000-0000-4000-8000-000000000000" });
    expect(err.code).to.equal(grpc.status.NOT_FOUND);
    expect(err.metadata.get("billing-error-code")).to.deep.equal(["MERCHANT_NOT_FOUND"]);
    expect((await sys.sql("select count(*)::int as n from plans"))[0].n).to.equal(0);
  });

  it("UpdateBillingSettings (issue 26) with days out of order or a bad final status: INVALID_ARGUMENT naming the field; SetFundingFallback with three assets names assets", async () => {
    const definition = protoLoader.loadSync(path.resolve("proto/billing/subscriptions/v1/subscriptions.proto"), {
      includeDirs: [path.resolve("proto")],
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    const subscriptions = new pkg.billing.subscriptions.v1.SubscriptionsService(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
    const failing = (method: string, request: object) =>
      new Promise<grpc.ServiceError>((resolve, reject) => {
        const md = new grpc.Metadata();
        md.set("authorization", `Bearer ${sys.config.internalApiToken}`);
        subscriptions[method](request, md, (err: grpc.ServiceError | null, res: unknown) =>
          err ? resolve(err) : reject(new Error(`expected an error, got ${JSON.stringify(res)}`)),
        );
      });
    try {
      for (const [request, field] of [
        [{ merchantId, dunningRetryDays: { days: [5, 1] } }, "dunningRetryDays"],
        [{ merchantId, dunningRetryDays: { days: [] } }, "dunningRetryDays"],
        [{ merchantId, dunningFinalStatus: "PAUSED" }, "dunningFinalStatus"],
        [{ merchantId, chargeNoticeDays: 400 }, "chargeNoticeDays"],
      ] as const) {
        const err = await failing("UpdateBillingSettings", request);
        expect(err.code, field).to.equal(grpc.status.INVALID_ARGUMENT);
        expect(err.details, field).to.match(new RegExp(`^${field}: `));
      }
      const err = await failing("SetFundingFallback", {
        walletUserId: "00000000-0000-4000-8000-000000000000",
        subscriptionId: "00000000-0000-4000-8000-000000000001",
        assets: ["BTC", "ETH", "USDC_ETH"],
      });
      expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err.details).to.match(/^assets: at most 2/);
      expect((await sys.sql("select count(*)::int as n from merchant_billing_settings"))[0].n).to.equal(0);
    } finally {
      subscriptions.close();
    }
  });

  it("a NUL in any string field: INVALID_ARGUMENT naming the field", async () => {
    const err = await call("CreatePlan", { ...plan, merchantId, name: "a\u0000b" });
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.equal("name: must not contain the NUL character (U+0000)");
  });

  it("metadata sent as JSON text keeps the REST rule: a number that would change is refused naming its key path", async () => {
    const err = await call("CreatePlan", { ...plan, merchantId, metadataJson: '{"a":{"n":12345678901234567890123}}' });
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.match(/^metadata\.a\.n: the number 12345678901234567890123 cannot be stored exactly/);
  });

  it("metadata sent as JSON text with a key twice or a __proto__ key is refused naming its path (JSON.parse would keep the last)", async () => {
    const twice = await call("CreatePlan", { ...plan, merchantId, metadataJson: '{"a":{"n":1,"n":2}}' });
    expect(twice.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(twice.details).to.equal("metadata.a.n: this key appears more than once in its object; send it once");
    const proto = await call("CreatePlan", { ...plan, merchantId, metadataJson: '{"__proto__":{"admin":true}}' });
    expect(proto.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(proto.details).to.match(/^metadata\.__proto__: this key is not allowed/);
  });

  it("a string that is not UTF-8 on the wire: INVALID_ARGUMENT, not INTERNAL", async () => {
    const err = await call("ListPlans", { merchantId: "\ud800" });
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.contain("not a valid message");
  });

  it("delivers grpc-message as plain text to a stock client (no %3A)", async () => {
    const err = await call("CreatePlan", { ...plan, merchantId, amount: "1e5" });
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.match(/^amount: /);
    expect(err.details).not.to.contain("%");
    const nonAscii = await call("CreatePlan", { ...plan, merchantId, currency: "€uro" });
    expect(nonAscii.details).to.contain("€uro");
  });

  it("encodes only what the gRPC spec says must be encoded", () => {
    expect(encodeGrpcMessage("amount: must be ≥ 1 (100%)")).to.equal("amount: must be %E2%89%A5 1 (100%25)");
    expect(decodeURI(encodeGrpcMessage("a: b/c?d#e"))).to.equal("a: b/c?d#e");
  });

  it("listens on 127.0.0.1 only by default (SERVICES_HOST)", async function () {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    if (!external) this.skip();
    const connects = (host: string) =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(sys.system.servicesPort!, host);
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });
    expect(await connects("127.0.0.1")).to.equal(true);
    expect(await connects(external!)).to.equal(false);
  });
});
