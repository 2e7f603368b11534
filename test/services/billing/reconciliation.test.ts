import { expect } from "chai";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { useTestSystem } from "../../support/system.ts";
import { reconciliationArrangements } from "../../support/reconciliation.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc } from "../../support/subscriptions.ts";
import { approvedSubscription } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

const run = promisify(execFile);
const BILLING = fileURLToPath(new URL("../../../cli/billing.ts", import.meta.url));

/** Reconciliation: every wallet transaction of a charge against the row that should own it, and back (issue 15). */
describe("reconciliation (GET /admin/v1/reconciliation, billing reconcile)", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  const { chargeRow, walletCharge } = reconciliationArrangements(sys);

  it("a clean run answers {status: ok, checked: N, anomalies: []}", async () => {
    const { api } = await sys.createMerchant();
    await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "10" } });
    const res = await sys.admin.get("/admin/v1/reconciliation");
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(["anomalies", "checked", "status"]);
    expect(res.body.status).to.equal("ok");
    expect(res.body.anomalies).to.deep.equal([]);
    expect(res.body.checked).to.be.a("number").and.to.be.greaterThan(0);
    expect((await sys.admin.get("/admin/v1/reconciliation")).body.status).to.equal("ok");
    // Operator only.
    expect((await api.get("/admin/v1/reconciliation")).status).to.equal(401);
  });

  it("reports each mismatch with ids, records it once, and the CLI exits 1 listing them", async () => {
    const { api, id: merchantId } = await sys.createMerchant();
    const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    // Money without a SUCCEEDED owner: the row says FAILED, the wallet moved the money.
    const failedButPaid = await chargeRow(subscriptionId, "FAILED", "3");
    await walletCharge(failedButPaid, user.id, merchantId, "3");
    // A SUCCEEDED owner without money.
    const paidWithoutMoney = await chargeRow(subscriptionId, "SUCCEEDED", "4");
    // Amounts that differ.
    const differs = await chargeRow(subscriptionId, "SUCCEEDED", "5");
    await walletCharge(differs, user.id, merchantId, "2");
    // A row parked after repeated settle failures.
    const parked = await chargeRow(subscriptionId, "PENDING", "1", { parked: true });
    // In flight (PENDING, not parked) with its money already moved: not judged yet.
    const inFlight = await chargeRow(subscriptionId, "PENDING", "1");
    await walletCharge(inFlight, user.id, merchantId, "1");

    const res = await sys.admin.get("/admin/v1/reconciliation");
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal("anomalies");
    const found = res.body.anomalies.map((a: any) => [a.kind, a.ownerType, a.ownerId]);
    expect(found).to.have.deep.members([
      ["MONEY_WITHOUT_SUCCEEDED_OWNER", "subscription_charge", failedButPaid],
      ["SUCCEEDED_OWNER_WITHOUT_MONEY", "subscription_charge", paidWithoutMoney],
      ["AMOUNT_MISMATCH", "subscription_charge", differs],
      ["PARKED_ROW", "subscription_charge", parked],
    ]);
    const mismatch = res.body.anomalies.find((a: any) => a.kind === "AMOUNT_MISMATCH");
    expect(mismatch.walletTransactionId).to.be.a("string");
    expect(mismatch.details).to.include({ ownerAmount: "5", walletAmount: "2" });

    // Recorded once: a second run reports the same and adds no row.
    const again = await sys.admin.get("/admin/v1/reconciliation");
    expect(again.body.anomalies).to.have.length(4);
    const [rows] = await sys.sql<{ n: number }>("select count(*)::int as n from reconciliation_anomalies");
    expect(rows!.n).to.equal(4);

    const cli = await run(process.execPath, [BILLING, "reconcile", "--json"], {
      env: { ...process.env, DATABASE_URL: sys.config.databaseUrl, REDIS_URL: sys.config.redisUrl, LOG_LEVEL: "silent" },
    }).then(
      () => ({ code: 0, stdout: "" }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
    expect(cli.code).to.equal(1);
    const out = JSON.parse(cli.stdout.trim().split("\n").pop()!);
    expect(out.status).to.equal("anomalies");
    expect(out.anomalies.map((a: any) => a.ownerId)).to.include.members([failedButPaid, paidWithoutMoney, differs, parked]);
    expect((await sys.sql<{ n: number }>("select count(*)::int as n from reconciliation_anomalies"))[0]!.n).to.equal(4);
  });

  it("reports a SUCCEEDED first payment of a subscription that expired: money taken for a period never billed (issue 21)", async () => {
    const { api, id: merchantId } = await sys.createMerchant();
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const plan = await createPlan(api, { amount: "3", interval: "DAY" });
    const s = await createSubscription(api, plan.id, user.id);
    // What the expiry race left: the subscription EXPIRED (never activated, period 0 never billed), its first payment SUCCEEDED and paid.
    await sys.sql("update subscriptions set status = 'EXPIRED', expired_at = now() where id = ?", [s.subscriptionId]);
    await sys.sql("update subscription_authorizations set status = 'EXPIRED', expired_at = now() where subscription_id = ?", [s.subscriptionId]);
    const { id: chargeId } = await make.charge(sys, {
      subscriptionId: s.subscriptionId,
      status: "SUCCEEDED",
      purpose: "FIRST_PAYMENT",
      period: { index: 0 },
      amount: 3,
    });
    await walletCharge(chargeId, user.id, merchantId, "3");
    // A subscription approved the normal way (its first payment bills period 0) is not reported.
    const fine = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "10" } });
    const [finePayment] = await sys.sql<{ id: string }>("select id from subscription_charges where subscription_id = ?", [fine.subscriptionId]);

    const res = await sys.admin.get("/admin/v1/reconciliation");
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal("anomalies");
    const ofCharge = res.body.anomalies.filter((a: any) => a.ownerId === chargeId);
    // The money and the row agree with each other: only the unbilled period is wrong.
    expect(ofCharge.map((a: any) => [a.kind, a.ownerType])).to.deep.equal([["CHARGE_WITHOUT_BILLED_PERIOD", "subscription_charge"]]);
    expect(ofCharge[0].details).to.include({ ownerStatus: "SUCCEEDED", ownerAsset: "USDT_TRON", ownerAmount: "3" });
    expect(res.body.anomalies.filter((a: any) => a.ownerId === finePayment!.id)).to.deep.equal([]);
    const recorded = await sys.sql<{ kind: string }>("select kind from reconciliation_anomalies where owner_id = ?", [chargeId]);
    expect(recorded.map((r) => r.kind)).to.deep.equal(["CHARGE_WITHOUT_BILLED_PERIOD"]);
  });

  it("sees refunds: money back without a SUCCEEDED refund, a SUCCEEDED refund without money, a charge total that is not the sum of its refunds", async () => {
    const { api, id: merchantId } = await sys.createMerchant();
    const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    const [paid] = await sys.sql<{ id: string }>("select id from subscription_charges where subscription_id = ? and status = 'SUCCEEDED'", [subscriptionId]);
    // A SUCCEEDED row names a wallet transaction (the factory's: one that does not exist).
    const refundRow = async (status: "SUCCEEDED" | "FAILED") => (await make.refund(sys, { chargeId: paid!.id, status })).id;
    // The wallet paid the customer back, but the refund row says FAILED.
    const failedButMoved = await refundRow("FAILED");
    const clients = new RpcClients(sys.config.internalApiToken);
    try {
      const moved = await clients.client(WalletService, sys.config.serviceUrls.wallet).refund({
        idempotencyKey: `refund-${failedButMoved}`,
        merchantId,
        walletUserId: user.id,
        asset: "USDT_TRON",
        amount: "1",
      });
      expect(moved.transactionId).to.be.a("string").and.not.equal("");
    } finally {
      clients.close();
    }
    // A SUCCEEDED refund the wallet never moved, which the charge's refunded total does not count either.
    const succeededWithoutMoney = await refundRow("SUCCEEDED");

    const found = (await sys.admin.get("/admin/v1/reconciliation")).body.anomalies.map((a: any) => [a.kind, a.ownerType, a.ownerId]);
    expect(found).to.deep.include.members([
      ["MONEY_WITHOUT_SUCCEEDED_OWNER", "refund", failedButMoved],
      ["SUCCEEDED_OWNER_WITHOUT_MONEY", "refund", succeededWithoutMoney],
      ["AMOUNT_MISMATCH", "subscription_charge", paid!.id],
    ]);
  });
});
