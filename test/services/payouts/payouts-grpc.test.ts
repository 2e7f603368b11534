import { expect } from "chai";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";

/** The payouts service over gRPC, as any internal caller reaches it: authenticated and validated like the others. */
describe("PayoutsService over gRPC (stock @grpc/grpc-js client)", () => {
  let payouts: any;
  let merchantId: string;

  const sys = useTestSystem({ workerGroups: [], gateway: true });
  before(async () => {
    merchantId = (await sys.createMerchant()).id;
    const definition = protoLoader.loadSync(path.resolve("proto/billing/payouts/v1/payouts.proto"), {
      includeDirs: [path.resolve("proto")],
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    payouts = new pkg.billing.payouts.v1.PayoutsService(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    payouts?.close();
  });

  const call = (method: string, request: object, token: string | null = sys.config.internalApiToken) =>
    new Promise<{ err: grpc.ServiceError | null; res: any }>((resolve) => {
      const md = new grpc.Metadata();
      if (token) md.set("authorization", `Bearer ${token}`);
      payouts[method](request, md, (err: grpc.ServiceError | null, res: unknown) => resolve({ err, res }));
    });

  it("refuses a call without the service token (UNAUTHENTICATED)", async () => {
    const { err } = await call("ListPayouts", { merchantId }, null);
    expect(err?.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect((await call("ListPayouts", { merchantId }, "wrong-token-0123456789")).err?.code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it("validates like every service: a malformed merchant id names merchantId, an unknown merchant is NOT_FOUND, NUL is refused", async () => {
    const bad = await call("CreatePayoutDestination", { merchantId: "nope", asset: "USDT_TRON", address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" });
    expect(bad.err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(bad.err?.details).to.match(/^merchantId: /);
    const missing = await call("CreatePayout", {
      merchantId: "00000000-0000-4000-8000-000000000000",
      destinationId: "00000000-0000-4000-8000-000000000000",
      amount: "10",
      metadataJson: "{}",
    });
    expect(missing.err?.code).to.equal(grpc.status.NOT_FOUND);
    expect(missing.err?.metadata.get("billing-error-code")).to.deep.equal(["MERCHANT_NOT_FOUND"]);
    const nul = await call("CreatePayoutDestination", { merchantId, asset: "USDT_TRON", address: "T\u0000" });
    expect(nul.err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(nul.err?.details).to.match(/^address: /);
    const address = await call("CreatePayoutDestination", { merchantId, asset: "USDT_TRON", address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u" });
    expect(address.err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(address.err?.details).to.match(/^address: .*checksum/);
    const amount = await call("CreatePayout", { merchantId, destinationId: "00000000-0000-4000-8000-000000000000", amount: "1e5", metadataJson: "{}" });
    expect(amount.err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(amount.err?.details).to.match(/^amount: /);
  });

  it("another merchant's (or no) destination is NOT_FOUND DESTINATION_NOT_FOUND", async () => {
    const { err } = await call("GetPayoutDestination", { merchantId, id: "00000000-0000-4000-8000-000000000000" });
    expect(err?.code).to.equal(grpc.status.NOT_FOUND);
    expect(err?.metadata.get("billing-error-code")).to.deep.equal(["DESTINATION_NOT_FOUND"]);
  });

  it("ActivatePayoutDestination (the dashboard's early activation) ends the cooling period once, records payout_destination.activated, refuses a removed one, and another merchant's is NOT_FOUND", async () => {
    const created = await call("CreatePayoutDestination", { merchantId, asset: "USDT_TRON", address: "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL" });
    expect(created.err).to.equal(null);
    expect(created.res.destination.status).to.equal("PENDING_ACTIVATION");
    const id = created.res.destination.id;
    const other = (await sys.createMerchant()).id;
    const foreign = await call("ActivatePayoutDestination", { merchantId: other, id });
    expect(foreign.err?.code).to.equal(grpc.status.NOT_FOUND);
    expect(foreign.err?.metadata.get("billing-error-code")).to.deep.equal(["DESTINATION_NOT_FOUND"]);
    expect((await call("ActivatePayoutDestination", { merchantId, id: "not-a-uuid" })).err?.code).to.equal(grpc.status.NOT_FOUND);

    const activated = await call("ActivatePayoutDestination", { merchantId, id });
    expect(activated.err).to.equal(null);
    expect(activated.res.destination.status).to.equal("ACTIVE");
    // Again: answered as it is, no second event.
    expect((await call("ActivatePayoutDestination", { merchantId, id })).res.destination.status).to.equal("ACTIVE");
    const events = await sys.sql(`select type from events where merchant_id = ? and data->>'id' = ? order by created_at`, [merchantId, id]);
    expect(events.map((e) => e.type)).to.deep.equal(["payout_destination.created", "payout_destination.activated"]);

    await call("RemovePayoutDestination", { merchantId, id });
    const removed = await call("ActivatePayoutDestination", { merchantId, id });
    expect(removed.err?.code).to.equal(grpc.status.ALREADY_EXISTS);
    expect(removed.err?.metadata.get("billing-error-code")).to.deep.equal(["DESTINATION_NOT_ACTIVE"]);
  });
});
