import { expect } from "chai";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";
import { createOrder } from "./orders-client.ts";

/** A chain watcher is any gRPC client: a stock @grpc/grpc-js one reports deposits with the service token. */
describe("ReportDeposit over stock gRPC (@grpc/grpc-js)", () => {
  let client: any;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    const definition = protoLoader.loadSync(path.resolve("proto/billing/orders/v1/orders.proto"), {
      includeDirs: [path.resolve("proto")],
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    client = new pkg.billing.orders.v1.OrdersService(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
  });

  const call = (method: string, request: object, token?: string) => {
    const md = new grpc.Metadata();
    if (token) md.set("authorization", `Bearer ${token}`);
    return new Promise<any>((resolve, reject) => client[method](request, md, (err: grpc.ServiceError | null, res: any) => (err ? reject(err) : resolve(res))));
  };

  it("records a deposit, answers with the order, and refuses callers without the service token", async () => {
    const { api } = await sys.createMerchant("gRPC watcher");
    const order = await createOrder(api, { asset: "BTC", amount: "0.3" });
    const request = { address: order.address, asset: "BTC", amount: "0.3", txId: "grpc-tx-1", confirmations: 2 };
    const refused = await call("ReportDeposit", request).catch((e) => e);
    expect(refused.code).to.equal(grpc.status.UNAUTHENTICATED);
    const res = await call("ReportDeposit", request, sys.config.internalApiToken);
    expect(res.outcome).to.equal("DEPOSIT_OUTCOME_RECORDED");
    expect(res.order).to.include({ id: order.id, status: "PAID", amountPaid: "0.30000000" });
    const missing = await call("ReportDeposit", { ...request, address: "bc1qnotanorderaddress" }, sys.config.internalApiToken).catch((e) => e);
    expect(missing.code).to.equal(grpc.status.NOT_FOUND);
    // grpc-js leaves the grpc-message header percent-encoded.
    expect(decodeURIComponent(missing.details)).to.match(/^address: no payment order has the address/);
  });
});
