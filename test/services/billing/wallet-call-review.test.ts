import { expect } from "chai";
import { renewBatch } from "../../../services/subscriptions/renewals/renew-batch.ts";
import { renewSubscription } from "../../../services/subscriptions/renewals/renew-subscription.ts";
import { retryPastDueOnTopUp } from "../../../services/subscriptions/renewals/retry-on-top-up.ts";
import { settleStaleCharges } from "../../../services/subscriptions/charges/settle-charge.ts";
import { settleStaleRefunds } from "../../../services/subscriptions/refunds/settle-refund.ts";
import { type TestSystem, useTestSystem } from "../../support/system.ts";
import { balances, createPlan, createWalletUser, credit, subscriptionsRpc } from "../../support/subscriptions.ts";
import { approvedSubscription, changeOf, createChange } from "../../support/change-sessions.ts";
import { advanceTo, chargesOf, debitUnderChargeKey, debitsOf, portsFor, subscriptionOf } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

/**
 * What the review of issue 21's money paths found, each played on the real
 * services: a batch's late chunk must not call the wallet under a lease that
 * was taken over; a renewal settles a plan change's charge in flight before
 * it prices the next period; a refund the service owes is never given up.
 */
describe("wallet calls: the review's cases", function () {
  this.timeout(60_000);
  let rpc: ReturnType<typeof subscriptionsRpc>;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  const reconciliationClean = async () => {
    const report = await sys.admin.get("/admin/v1/reconciliation");
    expect(report.body.anomalies, JSON.stringify(report.body.anomalies)).to.deep.equal([]);
  };

  it("a batch's later merchant chunk whose leases were taken over meanwhile is not called: each period paid once", async () => {
    // Two merchants in one batch; each customer's first payment spends the balance, so the renewals are refused until a top-up.
    const subs: { api: Awaited<ReturnType<TestSystem["createMerchant"]>>["api"]; subscriptionId: string; userId: string; merchantId: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const merchant = await sys.createMerchant();
      const plan = await createPlan(merchant.api, { amount: "4", interval: "DAY" });
      const user = await createWalletUser(sys, { USDT_TRON: "4" });
      const subscriptionId = await approvedSubscription(merchant.api, rpc.client, plan.id, user.id);
      const [owner] = await sys.sql<{ merchant_id: string }>("select merchant_id from subscriptions where id = ?", [subscriptionId]);
      subs.push({ api: merchant.api, subscriptionId, userId: user.id, merchantId: owner!.merchant_id });
    }
    const due = Math.max(...(await Promise.all(subs.map(async (s) => Date.parse((await subscriptionOf(s.api, s.subscriptionId)).nextBillingAt)))));
    await advanceTo(sys, new Date(due + 60_000));

    let toppedUpId: string | undefined;
    const batch = portsFor(sys);
    const plain = portsFor(sys);
    try {
      const realBatch = batch.ports.wallet.chargeBatch.bind(batch.ports.wallet);
      let first = true;
      let toppedUp: (typeof subs)[number] | undefined;
      const wallet = new Proxy(batch.ports.wallet, {
        get(target, prop, receiver) {
          if (prop !== "chargeBatch") return Reflect.get(target, prop, receiver);
          return async (...args: Parameters<typeof realBatch>) => {
            if (first) {
              first = false;
              // The first merchant's call took longer than the lease: the other merchant's rows were taken over by the
              // sweep (refused: PAST_DUE), and that customer topped up before the batch reached its chunk.
              const other = subs.find((s) => s.merchantId !== args[0].merchantId);
              if (!other) throw new Error("the batch called a merchant the test does not know");
              toppedUp = other;
              await sys.sql("update subscription_charges set lease_until = now() - interval '1 second' where subscription_id = ? and status = 'PENDING'", [
                other.subscriptionId,
              ]);
              expect(await settleStaleCharges(sys.context(), plain.ports)).to.equal(1);
              await credit(sys, other.userId, "USDT_TRON", "10");
            }
            return realBatch(...args);
          };
        },
      });
      await renewBatch(
        sys.context(),
        { ...batch.ports, wallet },
        subs.map((s) => s.subscriptionId),
      );
      for (const s of subs) await retryPastDueOnTopUp(sys.context(), plain.ports, s.userId, "USDT_TRON");
      toppedUpId = toppedUp?.userId;
    } finally {
      batch.close();
      plain.close();
    }
    for (const s of subs) {
      const charges = await chargesOf(sys, s.subscriptionId);
      // Never two movements for one key, never a movement for a FAILED attempt.
      expect(await debitsOf(sys, s.subscriptionId)).to.equal(charges.filter((c) => c.status === "SUCCEEDED").length);
    }
    // The customer who topped up paid period 1 once: 10 - 4.
    expect((await balances(sys, toppedUpId!)).USDT_TRON).to.equal("6");
    await reconciliationClean();
  });

  it("a renewal settles a plan change's charge in flight first, then charges the period at the new plan's price", async () => {
    const { api } = await sys.createMerchant();
    const basic = await createPlan(api, { name: "Basic", amount: "4", interval: "DAY" });
    const plus = await createPlan(api, { name: "Plus", amount: "9", interval: "DAY" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    const change = await createChange(api, subscriptionId, plus.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "5" });
    // The immediate charge a crash left after the wallet debited it: PENDING, lease run out, its key already used.
    const {
      id: chargeId,
      merchantId,
      walletUserId,
    } = await make.charge(sys, { subscriptionId, purpose: "PLAN_CHANGE", changeSessionId: change.id, amount: 5, leaseSeconds: -1 });
    await debitUnderChargeKey(sys, chargeId, { walletUserId, merchantId, amount: "5", description: "debited, then the approval crashed" });
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, subscriptionId)).nextBillingAt) + 60_000));

    const { ports, close } = portsFor(sys);
    try {
      await renewSubscription(sys.context(), ports, { subscriptionId });
    } finally {
      close();
    }
    expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("APPLIED");
    const sub = await subscriptionOf(api, subscriptionId);
    expect(sub.planId).to.equal(plus.id);
    const periods = (await chargesOf(sys, subscriptionId)).filter((c) => c.status === "SUCCEEDED").map((c) => [c.period_index, Number(c.amount)]);
    // Period 1 at Plus's price: the change paid in period 0 applied before period 1 was priced.
    expect(periods).to.deep.equal([
      [0, 4],
      [1, 9],
    ]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("82");
    await reconciliationClean();
  });

  it("a refund the service owes (automatic) is retried with back-off on a low merchant balance, never FAILED", async () => {
    const { api } = await sys.createMerchant();
    const plan = await createPlan(api, { amount: "4", interval: "MONTH" });
    const user = await createWalletUser(sys, { USDT_TRON: "4" });
    const subscriptionId = await approvedSubscription(api, rpc.client, plan.id, user.id);
    const [charge] = await chargesOf(sys, subscriptionId);
    // More than the merchant holds (4): the wallet refuses it as MERCHANT_BALANCE_INSUFFICIENT.
    const { id: refundId } = await make.refund(sys, { chargeId: charge!.id, amount: 5, owed: true, reason: "automatic: test" });
    const { ports, close } = portsFor(sys);
    try {
      expect(await settleStaleRefunds(sys.context(), ports)).to.equal(0);
    } finally {
      close();
    }
    const [row] = await sys.sql<{ status: string; settle_failures: number; backed_off: boolean }>(
      "select status, settle_failures, next_settle_at > now() as backed_off from subscription_refunds where id = ?",
      [refundId],
    );
    expect(row).to.deep.equal({ status: "PENDING", settle_failures: 1, backed_off: true });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("0");
  });
});
