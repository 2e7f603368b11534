import { expect } from "chai";
import { performance } from "node:perf_hooks";
import { ChargeOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { subscriptionPorts, type SubscriptionPorts } from "../../../services/subscriptions/ports.ts";
import { SubscriptionCharge } from "../../../services/subscriptions/entities.ts";
import { chargeWallet, chargeWalletBatch, commitSettle } from "../../../services/subscriptions/charges/settle-charge.ts";
import { takeLease } from "../../../services/platform/wallet-calls/wallet-call.ts";
import { renewSubscription } from "../../../services/subscriptions/renewals/renew-subscription.ts";
import { type TestSystem, useTestSystem } from "../../support/system.ts";
import { balances, credit, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceTo, approvedSubscription, chargesOf, subscriptionOf } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

/** Ledger transactions moved under a subscription's charge keys. */
async function debitsOf(sys: TestSystem, subscriptionId: string): Promise<number> {
  const [row] = await sys.sql<{ n: number }>(
    `select count(*)::int as n from ledger_transactions
      where idempotency_key in (select 'subscription-charge-' || id from subscription_charges where subscription_id = ?)`,
    [subscriptionId],
  );
  return row!.n;
}

/**
 * The stalled settle (issue 15): worker A's charge is refused, A stalls past
 * its lease, the customer tops up, the stale-charge sweep takes the lease and
 * the same key now moves the money; then A wakes up with its old answer.
 * Played step by step (no timing), it must end with one debit and a renewed period.
 */
describe("charge protocol: a settle delayed past its lease is fenced off", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let clients: RpcClients;
  let ports: SubscriptionPorts;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
    clients = new RpcClients(sys.config.internalApiToken);
    ports = subscriptionPorts({ rpc: clients, config: sys.config, queues: sys.system.queues!, logger: createLogger("silent") });
  });
  after(async () => {
    clients?.close();
    rpc?.close();
  });

  it("refused → stall → top-up → sweep takes over and is paid → the stale FAILED settle commits nothing: one debit, no dunning", async () => {
    const { api } = await sys.createMerchant();
    // The first payment spends the whole balance: the renewal is refused until a top-up.
    const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "5", interval: "DAY" }, credits: { USDT_TRON: "5" } });
    const active = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));

    // Worker A opened the renewal's charge row and holds its lease (generation 1)…
    const { id: chargeId } = await make.charge(sys, { subscriptionId, amount: 5, leaseSeconds: 30, leaseGeneration: 1 });
    const charge = await sys.context().em.findOneOrFail(SubscriptionCharge, { id: chargeId });
    // …and the wallet refused it.
    const answerA = await chargeWallet(ports, charge);
    expect(answerA.outcome).to.equal(ChargeOutcome.INSUFFICIENT_FUNDS);

    // A stalls past its lease; the customer tops up.
    await sys.sql("update subscription_charges set lease_until = now() - interval '1 second' where id = ?", [chargeId]);
    await credit(sys, user.id, "USDT_TRON", "5");

    // The stale-charge sweep takes the expired lease (generation 2): the same key now moves the money.
    const sweepGeneration = await takeLease(sys.context().em, "subscription_charges", chargeId);
    expect(sweepGeneration).to.equal(2);
    const answerSweep = await chargeWallet(ports, charge);
    expect(answerSweep.outcome).to.equal(ChargeOutcome.SUCCEEDED);
    expect(await debitsOf(sys, subscriptionId)).to.equal(2); // first payment + this renewal

    // A wakes up before the sweep settles and commits FAILED with its old generation: fenced off, nothing recorded.
    const late = await commitSettle(sys.context(), ports, chargeId, 1, answerA);
    expect(late.state).to.equal("in_progress");
    expect((await chargesOf(sys, subscriptionId)).map((c) => c.status)).to.deep.equal(["SUCCEEDED", "PENDING"]);
    expect((await subscriptionOf(api, subscriptionId)).status).to.equal("ACTIVE"); // not PAST_DUE

    // The sweep settles with the generation it holds: the period is paid once.
    const settled = await commitSettle(sys.context(), ports, chargeId, sweepGeneration!, answerSweep);
    expect(settled.state).to.equal("settled");
    // And A settling again after that changes nothing either.
    expect((await commitSettle(sys.context(), ports, chargeId, 1, answerA)).state).to.equal("settled");

    const charges = await chargesOf(sys, subscriptionId);
    expect(charges.map((c) => [c.period_index, c.status])).to.deep.equal([
      [0, "SUCCEEDED"],
      [1, "SUCCEEDED"],
    ]);
    const after = await subscriptionOf(api, subscriptionId);
    expect(after.status).to.equal("ACTIVE");
    expect(after.currentPeriodStart).to.equal(active.nextBillingAt);
    expect((await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.renewed")).to.have.length(1);

    // Nothing is due again: no retry, no second debit of the period.
    const again = await renewSubscription(sys.context(), ports, { subscriptionId });
    expect(again.paid).to.equal(0);
    expect(await debitsOf(sys, subscriptionId)).to.equal(2);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("0");
  });

  it("a settle whose lease was not taken over still commits (late but alone)", async () => {
    const { api } = await sys.createMerchant();
    const { subscriptionId } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "10" } });
    const active = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    const { id: chargeId } = await make.charge(sys, { subscriptionId, amount: 3, leaseSeconds: -1, leaseGeneration: 1 });
    const charge = await sys.context().em.findOneOrFail(SubscriptionCharge, { id: chargeId });
    const answer = await chargeWallet(ports, charge);
    const res = await commitSettle(sys.context(), ports, chargeId, 1, answer);
    expect(res.state).to.equal("settled");
    expect((await chargesOf(sys, subscriptionId)).map((c) => c.status)).to.deep.equal(["SUCCEEDED", "SUCCEEDED"]);
    expect(await debitsOf(sys, subscriptionId)).to.equal(2);
  });

  it("a set's first ChargeBatch right after its leases were taken calls without renewing them; long after, it renews first and leaves out a row taken over", async () => {
    const { api } = await sys.createMerchant();
    // The first payment spends the balance: the renewal is refused, so no money moves whatever is called.
    const { subscriptionId } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "4", interval: "DAY" }, credits: { USDT_TRON: "4" } });
    const active = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    const { id: chargeId } = await make.charge(sys, { subscriptionId, amount: 4, leaseSeconds: 30, leaseGeneration: 1 });
    const charge = await sys.context().em.findOneOrFail(SubscriptionCharge, { id: chargeId });
    const leaseOf = async () =>
      (await sys.sql<{ until: string }>("select lease_until::text as until from subscription_charges where id = ?", [chargeId]))[0]!.until;
    const taken = await leaseOf();

    // Right after: called, the lease as it was taken (no update of the row).
    const fresh = await chargeWalletBatch(sys.context().em.fork(), ports, [charge], performance.now());
    expect(fresh.get(chargeId)?.outcome).to.equal(ChargeOutcome.INSUFFICIENT_FUNDS);
    expect(await leaseOf()).to.equal(taken);

    // Long after (a stalled process), with the lease held still: renewed, then called.
    const late = await chargeWalletBatch(sys.context().em.fork(), ports, [charge], performance.now() - 60_000);
    expect(late.get(chargeId)?.outcome).to.equal(ChargeOutcome.INSUFFICIENT_FUNDS);
    expect(await leaseOf()).to.not.equal(taken);

    // Long after, the lease run out and taken over by the sweep meanwhile: not called under the old generation.
    await sys.sql("update subscription_charges set lease_until = now() - interval '1 second' where id = ?", [chargeId]);
    expect(await takeLease(sys.context().em, "subscription_charges", chargeId)).to.equal(2);
    const overtaken = await chargeWalletBatch(sys.context().em.fork(), ports, [charge], performance.now() - 60_000);
    expect(overtaken.size).to.equal(0);
  });
});
