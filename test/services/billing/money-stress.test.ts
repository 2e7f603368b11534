import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createPlan, createSubscription, createWalletUser, credit, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { advanceTo, portsFor, serviceNow } from "../../support/billing.ts";
import type { SubscriptionPorts } from "../../../services/subscriptions/ports.ts";
import { renewBatch } from "../../../services/subscriptions/renewals/renew-batch.ts";
import { retryPastDueOnTopUp } from "../../../services/subscriptions/renewals/retry-on-top-up.ts";
import { changeFundingAsset } from "../../../services/subscriptions/customer/change-funding-asset.ts";
import { expireDueAuthorizations } from "../../../services/subscriptions/expire-authorization.ts";
import { quotePlan } from "../../../services/subscriptions/funding.ts";

const N = 200;

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<PromiseSettledResult<unknown>[]> {
  const results: PromiseSettledResult<unknown>[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!).then(
          (value) => ({ status: "fulfilled", value }) as const,
          (reason: unknown) => ({ status: "rejected", reason }) as const,
        );
      }
    }),
  );
  return results;
}

/**
 * Issue 21's stress: the races the review found, each 200 times at once, on
 * the real services. Whatever interleaving happens, every charge is in its
 * own asset's quote, no expired subscription keeps a payment, and the
 * ledger and reconciliation are clean.
 */
describe("money under races (200 at once)", function () {
  this.timeout(240_000);
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let real: { ports: SubscriptionPorts; close(): void };

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant()).api;
    rpc = subscriptionsRpc(sys);
    real = portsFor(sys);
  });
  after(async () => {
    real?.close();
    rpc?.close();
  });

  async function assertClean(): Promise<void> {
    const ledger = await sys.admin.get("/admin/v1/ledger/check");
    expect(ledger.status, ledger.text).to.equal(200);
    expect(ledger.body.ok, JSON.stringify(ledger.body)).to.equal(true);
    const report = await sys.admin.get("/admin/v1/reconciliation");
    expect(report.status, report.text).to.equal(200);
    expect(report.body.anomalies, JSON.stringify(report.body.anomalies)).to.deep.equal([]);
  }

  it(`${N} PAST_DUE subscriptions, each with a top-up retry racing a funding-asset change: every charge is its own asset's quote`, async () => {
    const plan = await createPlan(api, { amount: "12.34", currency: "USD", interval: "DAY" });
    // The first payment spends the USDT; the BTC covers a retry in BTC.
    const users = await inParallel(
      Array.from({ length: N }, (_, i) => i),
      8,
      async () => createWalletUser(sys, { USDT_TRON: "12.34", BTC: "0.01" }),
    );
    const made = await inParallel(users, 8, async (r) => {
      const user = (r as PromiseFulfilledResult<Awaited<ReturnType<typeof createWalletUser>>>).value;
      const s = await createSubscription(api, plan.id, user.id);
      await rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
      return { subscriptionId: s.subscriptionId as string, userId: user.id };
    });
    const pairs = made.map((r) => (r as PromiseFulfilledResult<{ subscriptionId: string; userId: string }>).value);
    const ids = pairs.map((p) => p.subscriptionId);

    const [next] = await sys.sql<{ at: Date }>("select max(next_billing_at) as at from subscriptions where id = any(?::uuid[])", [`{${ids.join(",")}}`]);
    await advanceTo(sys, new Date(new Date(next!.at).getTime() + 60_000));
    await renewBatch(sys.context(), real.ports, ids);
    const [pastDue] = await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where status = 'PAST_DUE' and id = any(?::uuid[])", [
      `{${ids.join(",")}}`,
    ]);
    expect(pastDue!.n).to.equal(N);

    // The race, N times at once: a USDT top-up and its retry against a change to BTC (whose own retry then runs).
    const outcomes = await inParallel(pairs, 20, ({ subscriptionId, userId }) =>
      Promise.all([
        (async () => {
          await credit(sys, userId, "USDT_TRON", "100");
          await retryPastDueOnTopUp(sys.context(), real.ports, userId, "USDT_TRON");
        })(),
        changeFundingAsset(sys.context(), real.ports, { walletUserId: userId, subscriptionId, asset: "BTC" }).catch((err: { code?: string }) => {
          // A charge in flight refuses the change (409): the customer would try again; nothing else may fail.
          if (err.code !== "PAYMENT_IN_PROGRESS") throw err;
        }),
      ]),
    );
    expect(outcomes.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason))).to.deep.equal([]);

    const charges = await sys.sql<{ asset: string; asset_amount: string; status: string; subscription_id: string }>(
      "select asset, asset_amount::text, status, subscription_id from subscription_charges where subscription_id = any(?::uuid[])",
      [`{${ids.join(",")}}`],
    );
    const quotes = new Map<string, string>();
    for (const asset of new Set(charges.map((c) => c.asset))) quotes.set(asset, (await quotePlan(real.ports, plan, asset))!.assetAmount);
    const canonical = (v: string) => v.replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
    const wrong = charges.filter((c) => canonical(c.asset_amount) !== canonical(quotes.get(c.asset)!));
    expect(wrong, "charges not at their own asset's quote").to.deep.equal([]);
    expect(charges.filter((c) => c.status === "PENDING")).to.deep.equal([]);
    // Each subscription paid its period once (in one asset or the other) and is ACTIVE again.
    const [active] = await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where status = 'ACTIVE' and id = any(?::uuid[])", [
      `{${ids.join(",")}}`,
    ]);
    expect(active!.n).to.equal(N);
    const cancelled = await api.post(`/api/v1/subscriptions/${ids[0]}/cancel`, {});
    expect(cancelled.status, cancelled.text).to.equal(200);
    await assertClean();
  });

  it(`${N} approvals landing at their authorization's expiry instant, the expiry sweep looping: no expired subscription keeps a payment`, async () => {
    const plan = await createPlan(api, { amount: "3", currency: "USD", interval: "MONTH" });
    const made = await inParallel(
      Array.from({ length: N }, (_, i) => i),
      8,
      async () => {
        const user = await createWalletUser(sys, { USDT_TRON: "10" });
        const s = await createSubscription(api, plan.id, user.id);
        return { subscriptionId: s.subscriptionId as string, userId: user.id, token: tokenOf(s.authorizationUrl) };
      },
    );
    const subs = made.map((r) => (r as PromiseFulfilledResult<{ subscriptionId: string; userId: string; token: string }>).value);
    const ids = subs.map((s) => s.subscriptionId);
    // Every authorization expires in about a second of service time: the approvals below straddle that instant.
    const now = await serviceNow(sys);
    await sys.sql("update subscription_authorizations set expires_at = ? where subscription_id = any(?::uuid[])", [
      new Date(now.getTime() + 1_000),
      `{${ids.join(",")}}`,
    ]);

    let sweeping = true;
    let sweeps = 0;
    const sweep = (async () => {
      while (sweeping) {
        await expireDueAuthorizations(sys.context());
        sweeps += 1;
      }
    })();
    await inParallel(subs, 20, (s) =>
      rpc.client.approveAuthorization({ token: s.token, walletUserId: s.userId, fundingAsset: "USDT_TRON" }).catch(() => undefined),
    );
    sweeping = false;
    await sweep;
    await expireDueAuthorizations(sys.context());
    expect(sweeps).to.be.greaterThan(0);

    const [bad] = await sys.sql<{ n: number }>(
      `select count(*)::int as n from subscriptions s join subscription_charges c on c.subscription_id = s.id
        where s.status = 'EXPIRED' and c.status = 'SUCCEEDED' and s.id = any(?::uuid[])`,
      [`{${ids.join(",")}}`],
    );
    expect(bad!.n, "EXPIRED subscriptions owning a SUCCEEDED charge").to.equal(0);
    const states = await sys.sql<{ status: string; n: number }>(
      "select status, count(*)::int as n from subscriptions where id = any(?::uuid[]) group by status",
      [`{${ids.join(",")}}`],
    );
    expect(states.reduce((a, s) => a + s.n, 0)).to.equal(N);
    expect(
      states.map((s) => s.status).every((s) => s === "ACTIVE" || s === "EXPIRED"),
      JSON.stringify(states),
    ).to.equal(true);
    const [pending] = await sys.sql<{ n: number }>(
      "select count(*)::int as n from subscription_charges where status = 'PENDING' and subscription_id = any(?::uuid[])",
      [`{${ids.join(",")}}`],
    );
    expect(pending!.n).to.equal(0);
    await assertClean();
  });
});
