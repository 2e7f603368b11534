import { expect } from "chai";
import { add, amount, compare, convert, formatAmount, sub, zero, type Amount } from "../../../services/platform/money.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createWalletUser, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceBy, approvedSubscription, DAY, waitForQuiet } from "../../support/billing.ts";

const CASES = [
  { plan: { amount: "1.25", interval: "DAY" }, asset: "USDT_TRON", credit: "500" },
  { plan: { amount: "3.33", interval: "DAY", intervalCount: 2 }, asset: "BTC", credit: "1" },
  { plan: { amount: "7", interval: "WEEK" }, asset: "ETH", credit: "10" },
  { plan: { amount: "2", currency: "EUR", interval: "DAY" }, asset: "USDC_ETH", credit: "500" },
];

/** Deterministic "random" refund amounts: tests repeat exactly. */
function* fractions(): Generator<string> {
  const steps = ["0.01", "0.33", "1", "0.5", "full", "0.07", "0.99", "full", "0.2"];
  for (let i = 0; ; i++) yield steps[i % steps.length]!;
}

/** Renewals and refunds interleaved over 60 days of sandbox time, then every figure is reconciled. */
describe("refunds: a long run with renewals, then the ledger check and reconciliation", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let merchant: { id: string; api: ApiClient };

  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
    merchant = await sys.createMerchant("Long refunds");
  });
  after(async () => {
    rpc?.close();
  });

  it("refunds of first payments and renewals, racing the renewals, keep the ledger balanced, the charges' totals exact and every balance explained", async function () {
    // Room for a busy shared machine; the figures are asserted, never the time.
    this.timeout(180_000);
    const subs: { id: string; userId: string; asset: string; credit: string }[] = [];
    for (const c of CASES) {
      const user = await createWalletUser(sys, { [c.asset]: c.credit });
      const { subscriptionId } = await approvedSubscription(sys, merchant.api, rpc.client, { plan: { currency: "USD", ...c.plan }, user, asset: c.asset });
      subs.push({ id: subscriptionId, userId: user.id, asset: c.asset, credit: c.credit });
    }
    const next = fractions();
    let refunded = 0;
    for (let step = 0; step < 12; step++) {
      await advanceBy(sys, 5 * DAY);
      // Refunds race the renewals of this step on purpose (no waiting first).
      for (const s of subs) {
        const charges = (await merchant.api.get(`/api/v1/subscriptions/${s.id}/charges?status=SUCCEEDED&limit=100`)).body.data as any[];
        for (const charge of charges.slice(0, 2)) {
          const remaining = sub(amount(charge.amount), amount(charge.amountRefunded));
          if (compare(remaining, zero()) <= 0) continue;
          const f = next.next().value!;
          const requested = f === "full" ? undefined : formatAmount(convert(amount(f), remaining, 2, "down"));
          const res = await merchant.api.post("/api/v1/refunds", { chargeId: charge.id, ...(requested && requested !== "0" ? { amount: requested } : {}) });
          expect([201, 400, 409], res.text).to.include(res.status);
          if (res.status === 201) refunded += 1;
        }
      }
      await waitForQuiet(sys, 30_000);
    }
    expect(refunded).to.be.greaterThan(40);

    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.body.problems).to.deep.equal([]);
    expect(check.body.ok).to.equal(true);

    // Each charge's totals are the sum of its SUCCEEDED refunds, never above the charge.
    const mismatched = await sys.sql(
      `select c.id from subscription_charges c
         left join (select charge_id, sum(amount) as amount, sum(asset_amount) as asset_amount from subscription_refunds where status = 'SUCCEEDED' group by charge_id) r
           on r.charge_id = c.id
        where c.amount_refunded <> coalesce(r.amount, 0) or c.asset_amount_refunded <> coalesce(r.asset_amount, 0)
           or c.amount_refunded > c.amount or c.asset_amount_refunded > c.asset_amount`,
    );
    expect(mismatched).to.deep.equal([]);
    // Each SUCCEEDED refund is exactly one REFUND ledger transaction of its asset amount, and nothing else is.
    const orphans = await sys.sql(
      `select r.id from subscription_refunds r full join (select * from ledger_transactions where kind = 'REFUND') t on t.idempotency_key = 'refund-' || r.id
        where r.status = 'SUCCEEDED' and (t.id is null or t.id::text <> r.wallet_transaction_id or t.amount <> r.asset_amount)
           or (r.id is null) or (r.status <> 'SUCCEEDED' and t.id is not null)`,
    );
    expect(orphans).to.deep.equal([]);

    // Every customer balance: credited − charged + refunded; the merchant's: charged − refunded, per asset.
    const merchantExpected = new Map<string, Amount>();
    for (const s of subs) {
      const [row] = await sys.sql<{ charged: string; refunded: string }>(
        `select coalesce((select sum(asset_amount) from subscription_charges where subscription_id = ? and status = 'SUCCEEDED'), 0)::text as charged,
                coalesce((select sum(asset_amount) from subscription_refunds where subscription_id = ? and status = 'SUCCEEDED'), 0)::text as refunded`,
        [s.id, s.id],
      );
      const expected = add(sub(amount(s.credit), amount(row!.charged)), amount(row!.refunded));
      expect((await balances(sys, s.userId))[s.asset], s.asset).to.equal(formatAmount(expected));
      merchantExpected.set(s.asset, add(merchantExpected.get(s.asset) ?? zero(), sub(amount(row!.charged), amount(row!.refunded))));
    }
    const balance = (await merchant.api.get("/api/v1/balance")).body.available as { asset: string; amount: string }[];
    for (const [asset, expected] of merchantExpected) expect(balance.find((b) => b.asset === asset)?.amount, asset).to.equal(formatAmount(expected));
    expect((await sys.admin.get(`/admin/v1/merchants/${merchant.id}/balance`)).body.available).to.deep.equal(balance);
  });
});
