import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { createChange } from "../../support/change-sessions.ts";
import { advanceBy, serviceNow, waitForQuiet } from "../../support/billing.ts";
import { amount, add, formatAmount, zero } from "../../../services/platform/money.ts";

/** A simulated year with coupons, a free plan and prorations: every charge's parts add up, the ledger and reconciliation stay clean (issue 25). */
describe("pricing: a simulated year with coupons and prorations", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  it("twelve months of monthly and weekly subscriptions: exact amounts, one ledger movement per paid charge, reconciliation and the ledger check clean", async function () {
    this.timeout(180_000);
    const { api } = await sys.createMerchant("A year");
    const monthly = await createPlan(api, { amount: "19.99", currency: "USD", interval: "MONTH", maximumChargeAmount: "100" });
    const bigger = await createPlan(api, { amount: "49.99", currency: "USD", interval: "MONTH", maximumChargeAmount: "100" });
    const weekly = await createPlan(api, { amount: "3.33", currency: "USD", interval: "WEEK" });
    const free = await createPlan(api, { amount: "0", currency: "USD", interval: "MONTH" });
    const coupons = [
      (await api.post("/api/v1/coupons", { name: "30 × 3", percentOff: "30", duration: "REPEATING", durationInPeriods: 3 })).body,
      (await api.post("/api/v1/coupons", { name: "Third forever", percentOff: "33.33", duration: "FOREVER" })).body,
      (await api.post("/api/v1/coupons", { name: "Five once", amountOff: "5", currency: "USD", duration: "ONCE" })).body,
      (await api.post("/api/v1/coupons", { name: "All free", percentOff: "100", duration: "REPEATING", durationInPeriods: 2 })).body,
    ];
    await api.post("/api/v1/promotion-codes", { couponId: coupons[1].id, code: "THIRD" });
    const user = await createWalletUser(sys, { USDT_TRON: "5000" });
    const ids: string[] = [];
    const subscribe = async (planId: string, body: Record<string, unknown> = {}) => {
      const s = await createSubscription(api, planId, user.id, body);
      await client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
      ids.push(s.subscriptionId);
      return s.subscriptionId;
    };
    await subscribe(monthly.id, { couponId: coupons[0].id });
    await subscribe(monthly.id, { promotionCode: "third" });
    await subscribe(weekly.id, { couponId: coupons[2].id });
    await subscribe(weekly.id, { couponId: coupons[3].id });
    await subscribe(free.id);
    const changing = await subscribe(monthly.id);

    const start = await serviceNow(sys);
    for (let day = 0; day < 365; day += 5) {
      await advanceBy(sys, 5 * 86_400);
      if (day === 40) {
        const up = await createChange(api, changing, bigger.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE" });
        expect((await client.approveChangeSession({ token: tokenOf(up.approvalUrl), walletUserId: user.id })).message).to.equal("");
      }
      if (day === 200) {
        const down = await createChange(api, changing, monthly.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE" });
        expect((await client.approveChangeSession({ token: tokenOf(down.approvalUrl), walletUserId: user.id })).message).to.equal("");
      }
      if (day % 30 === 0) await waitForQuiet(sys, 60_000);
    }
    await waitForQuiet(sys, 60_000);
    expect((await serviceNow(sys)).getTime() - start.getTime()).to.be.greaterThan(364 * 86_400_000);

    const rows = await sys.sql<{
      subscription_id: string;
      status: string;
      amount: string;
      subtotal: string;
      discount_amount: string;
      credit_applied: string;
      asset_amount: string;
      receipt_number: string | null;
    }>(
      `select subscription_id, status, amount::text, subtotal::text, discount_amount::text, credit_applied::text, asset_amount::text, receipt_number
         from subscription_charges where subscription_id in (${ids.map(() => "?").join(", ")}) order by created_at`,
      ids,
    );
    const succeeded = rows.filter((r) => r.status === "SUCCEEDED");
    expect(succeeded.length).to.be.greaterThan(100);
    for (const r of succeeded) {
      expect(formatAmount(add(add(amount(r.amount), amount(r.discount_amount)), amount(r.credit_applied))), JSON.stringify(r)).to.equal(
        formatAmount(r.subtotal),
      );
      expect(r.receipt_number !== null, JSON.stringify(r)).to.equal(!amount(r.amount).isZero());
    }
    // The 30 % coupon: exactly three discounted charges; the 100 % one: exactly two zero charges of the weekly plan.
    const of = (id: string) => succeeded.filter((r) => r.subscription_id === id);
    expect(of(ids[0]!).filter((r) => !amount(r.discount_amount).isZero()).length).to.equal(3);
    expect(of(ids[3]!).filter((r) => amount(r.amount).isZero()).length).to.equal(2);
    expect(of(ids[4]!).every((r) => amount(r.amount).isZero())).to.equal(true);
    // Receipt numbers of the merchant: 1…n, no gap.
    const numbers = succeeded
      .filter((r) => r.receipt_number)
      .map((r) => Number(r.receipt_number!.split("-").pop()))
      .sort((a, b) => a - b);
    expect(numbers).to.deep.equal(numbers.map((_, k) => k + 1));
    // What the customer paid is what the ledger moved.
    const paid = succeeded.reduce((sum, r) => add(sum, amount(r.asset_amount)), zero());
    const [ledger] = await sys.sql<{ total: string }>(
      `select coalesce(sum(t.amount), 0)::text as total from (select e.amount from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
         where t.idempotency_key in (select 'subscription-charge-' || id from subscription_charges where subscription_id in (${ids.map(() => "?").join(", ")})) and e.amount > 0) t`,
      ids,
    );
    expect(formatAmount(ledger!.total)).to.equal(formatAmount(paid));
    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.body.ok, JSON.stringify(check.body)).to.equal(true);
    const recon = await sys.admin.get("/admin/v1/reconciliation");
    expect(recon.body.anomalies, JSON.stringify(recon.body)).to.deep.equal([]);
  });
});
