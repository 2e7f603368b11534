import { expect } from "chai";
import { periodEnd } from "../../../services/subscriptions/billing-calendar.ts";
import { amount, add, formatAmount, zero } from "../../../services/platform/money.ts";
import { useTestSystem } from "../../support/system.ts";
import { balances, createWalletUser, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceBy, approvedSubscription, chargesOf, DAY, serviceNow, subscriptionOf, waitForQuiet } from "../../support/billing.ts";

interface Case {
  plan: Record<string, unknown>;
  asset: string;
  /** How many charges the wallet is funded for (undefined: plenty). */
  fundedFor?: number;
}

const CASES: Case[] = [
  { plan: { amount: "1.25", interval: "DAY" }, asset: "USDT_TRON" },
  { plan: { amount: "0.5", interval: "DAY" }, asset: "USDT_TRON", fundedFor: 5 },
  { plan: { amount: "3", interval: "DAY", intervalCount: 10 }, asset: "USDC_ETH" },
  { plan: { amount: "4.99", interval: "WEEK" }, asset: "USDT_TRON" },
  { plan: { amount: "9", interval: "WEEK", intervalCount: 2, trialDays: 10 }, asset: "USDT_TRON" },
  { plan: { amount: "19.9", interval: "MONTH" }, asset: "USDT_TRON" },
  { plan: { amount: "19.9", interval: "MONTH" }, asset: "USDT_TRON", fundedFor: 3 },
  { plan: { amount: "25", currency: "EUR", interval: "MONTH" }, asset: "BTC" },
  { plan: { amount: "60", interval: "MONTH", intervalCount: 3, trialDays: 30 }, asset: "USDC_ETH" },
  { plan: { amount: "99", interval: "YEAR" }, asset: "USDT_TRON" },
  { plan: { amount: "12", currency: "GBP", interval: "MONTH", maximumChargeAmount: "15" }, asset: "USDT_TRON" },
  { plan: { amount: "7", interval: "WEEK" }, asset: "USDT_TRON", fundedFor: 10 },
];

/** Many subscriptions driven through 200 days of sandbox time in steps: every account stays exact, the ledger balances. */
describe("recurring billing: a long simulated run", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;

  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  it("charges every billing date of every funded subscription once, stops the unfunded ones, and the ledger checks out", async function () {
    // About 15 s alone; a loaded 2-core machine needs several times that.
    this.timeout(180_000);
    const merchants = [await sys.createMerchant("Long A"), await sys.createMerchant("Long B")];
    const subs: { id: string; c: Case; userId: string; credited: string; merchantId: string }[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [i, c] of CASES.entries()) {
        const merchant = merchants[(i + round) % 2]!;
        const plan: Record<string, unknown> = { currency: "USD", ...c.plan };
        // Enough for every charge of 200 days, or exactly `fundedFor` of them (plus dust): rates are the sandbox's fixed ones.
        const perCharge = c.asset === "BTC" ? "0.00045" : plan.currency === "GBP" ? "15.24" : String(plan.amount);
        const credited =
          c.fundedFor === undefined ? (c.asset === "BTC" ? "1" : "10000") : formatAmount(add(amount(perCharge).times(c.fundedFor), amount("0.01")));
        const user = await createWalletUser(sys, { [c.asset]: credited });
        const { subscriptionId } = await approvedSubscription(sys, merchant.api, rpc.client, { plan, user, asset: c.asset });
        subs.push({ id: subscriptionId, c, userId: user.id, credited, merchantId: merchant.id });
      }
      await advanceBy(sys, 3 * 3600); // the second round is anchored at another time of day
    }

    for (let step = 0; step < 4; step++) {
      await advanceBy(sys, 50 * DAY);
      await waitForQuiet(sys, 30_000);
    }
    const now = await serviceNow(sys);

    const merchantTotals = new Map<string, ReturnType<typeof zero>>();
    for (const s of subs) {
      const sub = await subscriptionOf(merchants.find((m) => m.id === s.merchantId)!.api, s.id);
      const charges = await chargesOf(sys, s.id);
      const paid = charges.filter((c) => c.status === "SUCCEEDED");
      expect(
        charges.filter((c) => c.status === "PENDING"),
        s.id,
      ).to.have.length(0);
      // Periods paid in order, each once, each at its anchor date.
      expect(paid.map((c) => c.period_index)).to.deep.equal(paid.map((_, k) => k));
      const anchor = new Date(sub.billingAnchor);
      const interval = s.c.plan.interval as "DAY" | "WEEK" | "MONTH" | "YEAR";
      const count = (s.c.plan.intervalCount as number | undefined) ?? 1;
      for (const c of paid) expect(c.period_start.toISOString()).to.equal(periodEnd(anchor, interval, count, c.period_index).toISOString());

      if (s.c.fundedFor === undefined) {
        let due = 0;
        while (periodEnd(anchor, interval, count, due).getTime() <= now.getTime()) due += 1;
        expect(sub.status, `${s.id} ${JSON.stringify(s.c.plan)}`).to.equal("ACTIVE");
        expect(paid.length, JSON.stringify(s.c.plan)).to.equal(due);
        expect(sub.nextBillingAt).to.equal(periodEnd(anchor, interval, count, due).toISOString());
      } else {
        expect(paid.length).to.equal(s.c.fundedFor);
        expect(sub.status).to.equal("UNPAID");
        // The first period not paid was tried once, then retried on days 1, 3 and 5.
        expect(charges.filter((c) => c.status === "FAILED").map((c) => c.attempt)).to.deep.equal([1, 2, 3, 4]);
      }
      const spent = paid.reduce((sum, c) => add(sum, amount(c.asset_amount!)), zero());
      expect((await balances(sys, s.userId))[s.c.asset]).to.equal(formatAmount(amount(s.credited).minus(spent)));
      const key = `${s.merchantId}/${s.c.asset}`;
      merchantTotals.set(key, add(merchantTotals.get(key) ?? zero(), spent));
    }
    for (const [key, total] of merchantTotals) {
      const [merchantId, asset] = key.split("/");
      const [row] = await sys.sql<{ balance: string }>(
        "select balance::text from ledger_accounts where owner_type = 'MERCHANT' and owner_id = ? and asset = ?",
        [merchantId, asset],
      );
      expect(formatAmount(row!.balance), key).to.equal(formatAmount(total));
    }
    const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_charges where status = 'SUCCEEDED'");
    expect(row!.n).to.be.greaterThan(500);
    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.status).to.equal(200);
    expect(check.body.ok, JSON.stringify(check.body)).to.equal(true);
  });
});
