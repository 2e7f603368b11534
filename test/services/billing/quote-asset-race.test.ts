import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import { credit, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceTo, approvedSubscription, portsFor, subscriptionOf } from "../../support/billing.ts";
import type { SubscriptionPorts } from "../../../services/subscriptions/ports.ts";
import { renewSubscription } from "../../../services/subscriptions/renewals/renew-subscription.ts";
import { changeFundingAsset } from "../../../services/subscriptions/customer/change-funding-asset.ts";
import { quotePlan } from "../../../services/subscriptions/funding.ts";

/**
 * Issue 21, defect 1: a renewal quoted the funding asset it read before the
 * row lock and opened the charge in the asset of the locked row, so a
 * funding-asset change committed in between charged, e.g., a 12.34 USD plan
 * 12.34 BTC. The quote is held open here (a real wallet call whose answer
 * the test releases), the asset changes, then the quote answers.
 */
describe("renewals: a charge is quoted in the asset it is opened in", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let real: { ports: SubscriptionPorts; close(): void };

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
    real = portsFor(sys);
  });
  after(async () => {
    real?.close();
    rpc?.close();
  });

  it("a funding-asset change while the quote is in flight: the charge is in the new asset at that asset's quote, and cancel still works", async () => {
    const { api } = await sys.createMerchant();
    // The first payment spends the USDT: the renewal fails and the subscription is PAST_DUE.
    const { subscriptionId, user, plan } = await approvedSubscription(sys, api, rpc.client, {
      plan: { amount: "12.34", currency: "USD", interval: "DAY" },
      // BTC too little for the retry that a change to a sufficient asset would run at once.
      credits: { USDT_TRON: "12.34", BTC: "0.00000001" },
    });
    const active = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    await renewSubscription(sys.context(), real.ports, { subscriptionId });
    expect((await subscriptionOf(api, subscriptionId)).status).to.equal("PAST_DUE");
    await credit(sys, user.id, "USDT_TRON", "100");

    // The retry's first quote (USDT_TRON) is held until the asset has changed to BTC.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const quoteReached = new Promise<void>((resolve) => (reached = resolve));
    let held = false;
    const wallet = new Proxy(real.ports.wallet, {
      get(target, prop, receiver) {
        if (prop !== "quote") return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<typeof target.quote>) => {
          const answer = await target.quote(...args);
          if (!held) {
            held = true;
            reached();
            await released;
          }
          return answer;
        };
      },
    });
    const racing = renewSubscription(sys.context(), { ...real.ports, wallet }, { subscriptionId, retryNow: true });
    await quoteReached;
    const changed = await changeFundingAsset(sys.context(), real.ports, { walletUserId: user.id, subscriptionId, asset: "BTC" });
    expect(changed.subscription.fundingAsset).to.equal("BTC");
    release();
    await racing;

    const charges = await sys.sql<{ asset: string; asset_amount: string; status: string }>(
      "select asset, asset_amount::text, status from subscription_charges where subscription_id = ? and period_index = 1 order by attempt",
      [subscriptionId],
    );
    const fresh = await quotePlan(real.ports, { amount: plan.amount, currency: plan.currency }, "BTC");
    const last = charges.at(-1)!;
    expect(last.asset).to.equal("BTC");
    expect(last.status).to.equal("FAILED");
    expect(last.asset_amount.replace(/\.?0+$/, "")).to.equal(fresh!.assetAmount.replace(/\.?0+$/, ""));
    // Every attempt of the period is in its own asset's quote: none in USDT_TRON after the change.
    expect(charges.filter((c) => c.status === "PENDING")).to.have.length(0);

    const cancelled = await api.post(`/api/v1/subscriptions/${subscriptionId}/cancel`, {});
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal("CANCELLED");
  });
});
