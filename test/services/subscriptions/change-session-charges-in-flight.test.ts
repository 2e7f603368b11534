import { expect } from "chai";
import { ConnectError } from "@connectrpc/connect";
import { errorCodeOf } from "../../../services/platform/rpc/error-code.ts";
import { changeSessionsSweep } from "../../../services/subscriptions/change-sessions/change-session-queue.ts";
import { subscriptionsSweep } from "../../../services/subscriptions/subscription-queue.ts";
import { renewSubscription } from "../../../services/subscriptions/renewals/renew-subscription.ts";
import { useTestSystem } from "../../support/system.ts";
import { balances, createPlan, createWalletUser, eventsOf, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { approvedSubscription, changeOf, createChange } from "../../support/change-sessions.ts";
import { advanceTo, chargesOf, debitUnderChargeKey, portsFor, subscriptionOf } from "../../support/billing.ts";
import { runSweeps } from "../../support/sweeps.ts";
import { creditWalletUser } from "../../../services/wallet/credit-wallet-user.ts";
import { make } from "../../support/factories/index.ts";

/**
 * Issue 21 (5): plan changes and charges in flight. An approval waits for a
 * renewal charge in flight and decides on what it left; an immediate charge
 * that settles after the subscription moved on does not apply its change
 * over the new state, and its money goes back to the customer.
 */
describe("plan changes and charges in flight", function () {
  this.timeout(60_000);
  let rpc: ReturnType<typeof subscriptionsRpc>;

  // No workers: nothing settles, renews or applies unless the test (or the use case under test) does it.
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  async function refusalCode(call: Promise<unknown>): Promise<string | undefined> {
    try {
      await call;
    } catch (err) {
      if (err instanceof ConnectError) return errorCodeOf(err);
      throw err;
    }
    return "NO_ERROR";
  }

  /** The renewal of period 1 as a worker leaves it mid-call: PENDING, its lease held (`leaseSeconds` from now). */
  async function renewalInFlight(subscriptionId: string, amount: string, leaseSeconds: number): Promise<string> {
    return (await make.charge(sys, { subscriptionId, amount, leaseSeconds, leaseGeneration: 1 })).id;
  }

  /** An immediate change charge a crash left after the wallet debited it: PENDING, lease run out, the key already used. */
  async function changeChargeDebitedNotSettled(subscriptionId: string, changeSessionId: string, amount: string): Promise<string> {
    const { id, merchantId, walletUserId } = await make.charge(sys, { subscriptionId, purpose: "PLAN_CHANGE", changeSessionId, amount, leaseSeconds: -1 });
    await debitUnderChargeKey(sys, id, { walletUserId, merchantId, amount, description: "debited, then the approval crashed" });
    return id;
  }

  const typesOf = async (subscriptionId: string) => (await eventsOf(sys, subscriptionId)).map((e) => e.type);

  it("a NEXT_BILLING approval during a renewal in flight waits for it: never plan_changed before that renewal's renewed at the old price", async () => {
    const { api } = await sys.createMerchant();
    const basic = await createPlan(api, { name: "Basic", amount: "4", interval: "DAY" });
    const pro = await createPlan(api, { name: "Pro", amount: "6", interval: "DAY" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    const due = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(due.nextBillingAt) + 60_000));
    const renewal = await renewalInFlight(subscriptionId, "4", 60);
    const change = await createChange(api, subscriptionId, pro.id);

    // The worker holds the renewal's lease: the approval waits for it, then answers 409 and changes nothing.
    const token = tokenOf(change.approvalUrl);
    expect(await refusalCode(rpc.client.approveChangeSession({ token, walletUserId: user.id }))).to.equal("PAYMENT_IN_PROGRESS");
    expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("PENDING_APPROVAL");
    await runSweeps(sys, [changeSessionsSweep]);
    expect(await typesOf(subscriptionId)).not.to.include("subscription.plan_changed");

    // The worker died after all (its lease ran out): the next approval settles the renewal first, at the old price,
    // and schedules the change for the billing after it.
    await sys.sql("update subscription_charges set lease_until = now() - interval '1 second' where id = ?", [renewal]);
    const approved = await rpc.client.approveChangeSession({ token, walletUserId: user.id });
    expect(approved.approved, approved.message).to.equal(true);
    const renewed = await subscriptionOf(api, subscriptionId);
    expect(renewed.planId).to.equal(basic.id);
    expect(Date.parse(renewed.nextBillingAt)).to.equal(Date.parse(due.nextBillingAt) + 86_400_000);
    const scheduled = await changeOf(api, subscriptionId, change.id);
    expect(scheduled).to.include({ status: "SCHEDULED", scheduledFor: renewed.nextBillingAt });
    expect((await chargesOf(sys, subscriptionId)).map((c) => [c.period_index, c.status, c.amount])).to.deep.equal([
      [0, "SUCCEEDED", "4.000000000000000000"],
      [1, "SUCCEEDED", "4.000000000000000000"],
    ]);

    // The change-session sweep finds nothing due; the next renewal applies the change and charges the new price.
    await runSweeps(sys, [changeSessionsSweep]);
    expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");
    await advanceTo(sys, new Date(Date.parse(renewed.nextBillingAt) + 60_000));
    const { ports, close } = portsFor(sys);
    try {
      await renewSubscription(sys.context(), ports, { subscriptionId });
    } finally {
      close();
    }
    const types = (await typesOf(subscriptionId)).filter((t) => t === "subscription.renewed" || t === "subscription.plan_changed");
    expect(types).to.deep.equal(["subscription.renewed", "subscription.plan_changed", "subscription.renewed"]);
    expect((await chargesOf(sys, subscriptionId)).map((c) => c.amount)).to.deep.equal(["4.000000000000000000", "4.000000000000000000", "6.000000000000000000"]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("86");
  });

  it("an IMMEDIATE approval with a charge settles the renewal in flight first and is refused on the PAST_DUE it left: nothing charged", async () => {
    const { api } = await sys.createMerchant();
    const basic = await createPlan(api, { name: "Basic", amount: "4", interval: "DAY" });
    const plus = await createPlan(api, { name: "Plus", amount: "9", interval: "DAY" });
    const user = await createWalletUser(sys, { USDT_TRON: "7" });
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, subscriptionId)).nextBillingAt) + 60_000));
    // The renewal was opened (4 USDT against the 3 left) and its worker died before calling the wallet.
    await renewalInFlight(subscriptionId, "4", -1);
    const change = await createChange(api, subscriptionId, plus.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "2" });

    const res = await rpc.client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id });
    expect(res.approved).to.equal(false);
    expect(res.refusalReason).to.equal("SUBSCRIPTION_NOT_CHANGEABLE");
    expect(await subscriptionOf(api, subscriptionId)).to.include({ status: "PAST_DUE", planId: basic.id });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("3");
    const [changeCharges] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_charges where change_session_id = ?", [change.id]);
    expect(changeCharges!.n).to.equal(0);
    expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("PENDING_APPROVAL");
  });

  it("a scheduled change that comes due while a renewal is in flight waits for the billing after it", async () => {
    const { api } = await sys.createMerchant();
    const basic = await createPlan(api, { name: "Basic", amount: "4", interval: "DAY" });
    const pro = await createPlan(api, { name: "Pro", amount: "6", interval: "DAY" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    const change = await createChange(api, subscriptionId, pro.id);
    expect((await rpc.client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id })).approved).to.equal(true);
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, subscriptionId)).nextBillingAt) + 60_000));
    // A renewal opened at the old price just before (data from before this rule, or a race): it is in flight.
    const renewal = await renewalInFlight(subscriptionId, "4", 60);

    await runSweeps(sys, [changeSessionsSweep]);
    expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");
    expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);

    // The renewal finishes at its price; the change applies at the next billing, whose renewal is at the new price.
    await sys.sql("update subscription_charges set lease_until = now() - interval '1 second' where id = ?", [renewal]);
    const { ports, close } = portsFor(sys);
    try {
      await renewSubscription(sys.context(), ports, { subscriptionId });
      await runSweeps(sys, [changeSessionsSweep]);
      expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");
      await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, subscriptionId)).nextBillingAt) + 60_000));
      await renewSubscription(sys.context(), ports, { subscriptionId });
    } finally {
      close();
    }
    const types = (await typesOf(subscriptionId)).filter((t) => t === "subscription.renewed" || t === "subscription.plan_changed");
    expect(types).to.deep.equal(["subscription.renewed", "subscription.plan_changed", "subscription.renewed"]);
    expect((await chargesOf(sys, subscriptionId)).map((c) => c.amount)).to.deep.equal(["4.000000000000000000", "4.000000000000000000", "6.000000000000000000"]);
  });

  it("an IMMEDIATE change whose plan was changed underneath is not applied over the new plan; its charge is refunded", async () => {
    const { api } = await sys.createMerchant();
    const basic = await createPlan(api, { name: "Basic", amount: "4", interval: "DAY" });
    const pro = await createPlan(api, { name: "Pro", amount: "6", interval: "DAY" });
    const plus = await createPlan(api, { name: "Plus", amount: "9", interval: "DAY" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    const scheduledChange = await createChange(api, subscriptionId, pro.id);
    expect((await rpc.client.approveChangeSession({ token: tokenOf(scheduledChange.approvalUrl), walletUserId: user.id })).approved).to.equal(true);
    // Priced against Basic; its approval took the money and crashed before settling.
    const immediate = await createChange(api, subscriptionId, plus.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "3" });
    const chargeId = await changeChargeDebitedNotSettled(subscriptionId, immediate.id, "3");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("93");

    // Meanwhile the scheduled change to Pro comes due and is applied.
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, subscriptionId)).nextBillingAt) + 60_000));
    await runSweeps(sys, [changeSessionsSweep]);
    expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);

    // The customer tries again: the charge settles (the wallet replays its key), the change is not applied, the money goes back.
    const res = await rpc.client.approveChangeSession({ token: tokenOf(immediate.approvalUrl), walletUserId: user.id });
    expect(res.approved).to.equal(false);
    expect(res.refusalReason).to.equal("PLAN_CHANGED");
    expect(res.message).to.equal(
      "The subscription's plan has changed since this request was made. Ask the merchant for a new link. Your payment of 3 USDT_TRON has been refunded.",
    );
    expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
    expect(await changeOf(api, subscriptionId, immediate.id)).to.include({ status: "CANCELLED", cancellationReason: "SUBSCRIPTION_CHANGED", chargeId });
    const charge = (await api.get(`/api/v1/subscriptions/${subscriptionId}/charges?limit=100`)).body.data.find((c: any) => c.id === chargeId);
    expect(charge).to.include({ status: "SUCCEEDED", amountRefunded: "3", assetAmountRefunded: "3" });
    const refunds = (await api.get(`/api/v1/refunds?chargeId=${chargeId}`)).body.data;
    expect(refunds).to.have.length(1);
    expect(refunds[0]).to.include({ status: "SUCCEEDED", amount: "3", assetAmount: "3" });
    expect(refunds[0].reason).to.match(/^automatic: the plan change it paid for was not applied/);
    expect(refunds[0].metadata).to.deep.equal({ changeSessionId: immediate.id });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("96");
    const planChanges = (await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.plan_changed");
    expect(planChanges.map((e) => e.data.planId)).to.deep.equal([pro.id]);
  });

  it("an immediate charge settled by the sweep after the subscription went PAST_DUE is not applied; the sweep refunds it", async () => {
    const { api } = await sys.createMerchant();
    const basic = await createPlan(api, { name: "Basic", amount: "4", interval: "DAY" });
    const plus = await createPlan(api, { name: "Plus", amount: "9", interval: "DAY" });
    const user = await createWalletUser(sys, { USDT_TRON: "5" });
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    const immediate = await createChange(api, subscriptionId, plus.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "5" });
    // The renewal finds 1 USDT for 4: PAST_DUE. (Since renewals settle a change's charge in flight first, the change's
    // charge must come after the failed renewal: an approval of the change on the PAST_DUE subscription that crashed after its debit.)
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, subscriptionId)).nextBillingAt) + 60_000));
    const { ports, close } = portsFor(sys);
    try {
      await renewSubscription(sys.context(), ports, { subscriptionId });
    } finally {
      close();
    }
    expect((await subscriptionOf(api, subscriptionId)).status).to.equal("PAST_DUE");
    // Money for the change arrives without a top-up retry (operator path), then the crashed approval debits it.
    await creditWalletUser(sys.context(), { walletUserId: user.id, asset: "USDT_TRON", amount: "5" });
    const chargeId = await changeChargeDebitedNotSettled(subscriptionId, immediate.id, "5");

    // The sweep settles the stale charge, then (same run) the refund its settle wrote.
    await runSweeps(sys, [subscriptionsSweep]);
    const sub = await subscriptionOf(api, subscriptionId);
    expect(sub).to.include({ status: "PAST_DUE", planId: basic.id });
    expect(await changeOf(api, subscriptionId, immediate.id)).to.include({ status: "CANCELLED", cancellationReason: "SUBSCRIPTION_CHANGED" });
    const [refund] = await sys.sql<{ status: string; asset_amount: string }>(
      "select status, asset_amount::text from subscription_refunds where charge_id = ?",
      [chargeId],
    );
    expect(refund).to.deep.equal({ status: "SUCCEEDED", asset_amount: "5.000000000000000000" });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("6");
    expect(await typesOf(subscriptionId)).not.to.include("subscription.plan_changed");
  });
});
