import { expect } from "chai";
import { ApprovalOutcome } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { claimDueAuthorizations, expireClaimedAuthorizations } from "../../../services/subscriptions/expire-authorization.ts";
import { useTestSystem } from "../../support/system.ts";
import { balances, createPlan, createSubscription, createWalletUser, eventsOf, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { advanceBy } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

/**
 * Issue 21 (2): the expiry sweep read "no first payment in flight" in the
 * snapshot of the statement that also took the row locks, so a first charge
 * an approval committed between that snapshot and the lock was not seen and
 * the subscription was expired under it; the charge then succeeded on an
 * EXPIRED subscription. The sweep now claims (locks) first and re-checks in
 * a later statement (a new snapshot, taken under the locks). The test runs the two
 * steps itself and commits the charge between them.
 */
describe("authorization expiry: a first payment committed while the sweep claims", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;

  // No workers: no sweep of its own expires anything behind the test's back.
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  it("is seen by the re-check: the subscription is left to its payment, which then activates it (never EXPIRED with money taken)", async () => {
    const { api } = await sys.createMerchant();
    const plan = await createPlan(api, { amount: "2", interval: "MONTH" });
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const racing = await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 });
    const plain = await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 });
    await advanceBy(sys, 6 * 60);
    const ctx = sys.context();
    await sys.system.clock!.clock.sync();

    const expired = await ctx.em.fork().transactional(async (em) => {
      const { authorizations: claimed } = await claimDueAuthorizations(em, ctx.clock.now());
      expect(claimed.map((c) => c.subscriptionId)).to.include.members([racing.subscriptionId, plain.subscriptionId]);
      // The approval's first charge, committed after the claim's snapshot. (The approval commits it under the
      // subscription lock, before the claim's lock is granted; here it commits after, so its foreign key's
      // key-share lock, which would wait for the claim, is skipped for this one arranged insert.)
      await sys.system.orm!.em.fork().transactional(async (other) => {
        await other.execute("set local session_replication_role = replica");
        await make.charge(
          { sql: (query, params) => other.execute(query, params as any[]) },
          {
            subscriptionId: racing.subscriptionId,
            purpose: "FIRST_PAYMENT",
            amount: 2,
          },
        );
      });
      return expireClaimedAuthorizations(em, ctx.clock, claimed);
    });

    // Only the subscription without a payment in flight expired.
    expect(expired).to.equal(1);
    const [racingRow] = await sys.sql<{ status: string; auth: string }>(
      "select s.status, a.status as auth from subscriptions s join subscription_authorizations a on a.subscription_id = s.id where s.id = ?",
      [racing.subscriptionId],
    );
    expect(racingRow).to.deep.equal({ status: "PENDING_APPROVAL", auth: "PENDING" });
    expect((await eventsOf(sys, racing.subscriptionId)).map((e) => e.type)).to.deep.equal(["subscription.created"]);
    expect((await eventsOf(sys, plain.subscriptionId)).map((e) => e.type)).to.deep.equal(["subscription.created", "subscription.expired"]);

    // The customer's next try finishes the payment in flight first: the money and the activation land together.
    const res = await rpc.client.approveAuthorization({ token: tokenOf(racing.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    expect(res.outcome).to.equal(ApprovalOutcome.APPROVED);
    expect((await sys.sql("select status from subscriptions where id = ?", [racing.subscriptionId]))[0].status).to.equal("ACTIVE");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("8");
    const report = await sys.admin.get("/admin/v1/reconciliation");
    expect(report.body.anomalies, JSON.stringify(report.body.anomalies)).to.deep.equal([]);
  });
});
