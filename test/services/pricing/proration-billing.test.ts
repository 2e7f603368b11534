import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createPlan, createWalletUser, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { approvedSubscription, changeBody, createChange } from "../../support/change-sessions.ts";
import { advanceBy, advanceTo, chargesOf, serviceNow, subscriptionOf, waitForCharges, waitForQuiet } from "../../support/billing.ts";
import { prorationAmount } from "../../../services/subscriptions/pricing/proration.ts";

/** Proration on plan changes through the real stack (issue 25): up (charged at once), down (credit), the credit spent by the next renewal. */
describe("pricing: prorated plan changes", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Proration")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  /** The proration the service may have computed: one of the whole seconds the approval call spanned. */
  function possible(oldAmount: string, newAmount: string, sub: any, from: Date, to: Date): string[] {
    const values = new Set<string>();
    for (let t = from.getTime() - 1000; t <= to.getTime() + 1000; t += 250) {
      values.add(prorationAmount(oldAmount, newAmount, new Date(sub.currentPeriodStart), new Date(sub.currentPeriodEnd), new Date(t)));
    }
    return [...values];
  }

  async function approveChange(approvalUrl: string, walletUserId: string) {
    const before = await serviceNow(sys);
    const res = await client.approveChangeSession({ token: tokenOf(approvalUrl), walletUserId });
    expect(res.message).to.equal("");
    return { before, after: await serviceNow(sys) };
  }

  it("refuses immediateChargeAmount with PRORATE + IMMEDIATE (400) and plans in two currencies (409 PRORATION_CURRENCY_MISMATCH)", async () => {
    const usd = await createPlan(api, { amount: "30", currency: "USD" });
    const usd2 = await createPlan(api, { amount: "60", currency: "USD" });
    const eur = await createPlan(api, { amount: "60", currency: "EUR" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const id = await approvedSubscription(api, client, usd.id, user.id);
    const url = `/api/v1/subscriptions/${id}/change-sessions`;
    const both = await api.post(url, changeBody(usd2.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE", immediateChargeAmount: "0" }));
    expect(both.status).to.equal(400);
    expect(both.body.message).to.match(/^immediateChargeAmount: must be absent with proration PRORATE/);
    expect((await api.post(url, changeBody(usd2.id, { proration: "SOMETIMES" }))).status).to.equal(400);
    const mismatch = await api.post(url, changeBody(eur.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE" }));
    expect(mismatch.status).to.equal(409);
    expect(mismatch.body.error).to.equal("PRORATION_CURRENCY_MISMATCH");
    const ok = await api.post(url, changeBody(usd2.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE" }));
    expect(ok.status).to.equal(201);
    expect(ok.body).to.include({ proration: "PRORATE", prorationAmount: null, immediateChargeAmount: "0" });
  });

  it("an upgrade mid-period is charged its prorated difference at once; a downgrade in the same period becomes credit the next renewal spends", async () => {
    const basic = await createPlan(api, { amount: "30", currency: "USD", interval: "MONTH", maximumChargeAmount: "100" });
    const pro = await createPlan(api, { amount: "60", currency: "USD", interval: "MONTH", maximumChargeAmount: "100" });
    const user = await createWalletUser(sys, { USDT_TRON: "500" });
    const id = await approvedSubscription(api, client, basic.id, user.id);
    await advanceBy(sys, 10 * 86_400);

    // Up: 30 → 60, about two thirds of the period left.
    const up = await createChange(api, id, pro.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE" });
    const sub = await subscriptionOf(api, id);
    const upWindow = await approveChange(up.approvalUrl, user.id);
    const upSession = (await api.get(`/api/v1/subscriptions/${id}/change-sessions/${up.id}`)).body;
    expect(upSession.status).to.equal("APPLIED");
    expect(possible("30", "60", sub, upWindow.before, upWindow.after)).to.include(upSession.prorationAmount);
    expect(Number(upSession.prorationAmount)).to.be.within(18, 22);
    const upCharge = (await api.get(`/api/v1/charges/${upSession.chargeId}`)).body;
    expect(upCharge).to.include({ status: "SUCCEEDED", amount: upSession.prorationAmount, subtotal: upSession.prorationAmount });
    expect(upCharge.receiptNumber).to.be.a("string");

    // Down, in the same period: 60 → 30, credit.
    await advanceBy(sys, 5 * 86_400);
    const down = await createChange(api, id, basic.id, { effectiveMode: "IMMEDIATE", proration: "PRORATE" });
    const downWindow = await approveChange(down.approvalUrl, user.id);
    const downSession = (await api.get(`/api/v1/subscriptions/${id}/change-sessions/${down.id}`)).body;
    expect(downSession).to.include({ status: "APPLIED", chargeId: null });
    expect(possible("60", "30", sub, downWindow.before, downWindow.after)).to.include(downSession.prorationAmount);
    expect(downSession.prorationAmount.startsWith("-")).to.equal(true);
    const credit = downSession.prorationAmount.slice(1);
    const afterDown = await subscriptionOf(api, id);
    expect(afterDown).to.include({ planId: basic.id, creditBalance: credit });
    const spent = (await balances(sys, user.id)).USDT_TRON;

    // The next renewal (basic, 30) spends the credit first; the one after is full price.
    await advanceTo(sys, new Date(new Date(afterDown.nextBillingAt).getTime() + 1000));
    await waitForCharges(sys, id, 2);
    const renewal = (await api.get(`/api/v1/subscriptions/${id}/charges?limit=10`)).body.data.find((c: any) => c.periodIndex === 1);
    const expectedAmount = (30 - Number(credit)).toFixed(18).replace(/\.?0+$/, "");
    expect(renewal).to.include({ subtotal: "30", creditApplied: credit, discountAmount: "0" });
    expect(Number(renewal.amount)).to.be.closeTo(Number(expectedAmount), 1e-12);
    expect((await subscriptionOf(api, id)).creditBalance).to.equal("0");
    const paid = (await chargesOf(sys, id)).find((c) => c.period_index === 1)!;
    expect(Number(spent) - Number((await balances(sys, user.id)).USDT_TRON)).to.be.closeTo(Number(paid.asset_amount), 1e-9);
    await advanceTo(sys, new Date(new Date((await subscriptionOf(api, id)).nextBillingAt).getTime() + 1000));
    await waitForCharges(sys, id, 3);
    expect((await chargesOf(sys, id)).map((c) => Number(c.amount))[2]).to.equal(30);

    await waitForQuiet(sys);
    expect((await sys.admin.get("/admin/v1/ledger/check")).body.ok).to.equal(true);
    expect((await sys.admin.get("/admin/v1/reconciliation")).body.anomalies).to.deep.equal([]);
  });
});
