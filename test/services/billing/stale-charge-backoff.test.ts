import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { subscriptionPorts, type SubscriptionPorts } from "../../../services/subscriptions/ports.ts";
import { settleStaleCharges } from "../../../services/subscriptions/charges/settle-charge.ts";
import { MAX_CALL_FAILURES as MAX_SETTLE_FAILURES, SWEEP_BATCH as STALE_CHARGE_BATCH } from "../../../services/platform/wallet-calls/wallet-call.ts";
import { useTestSystem } from "../../support/system.ts";
import { subscriptionsRpc } from "../../support/subscriptions.ts";
import { approvedSubscription, chargesOf, subscriptionOf, advanceTo } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

/** Rows that keep failing back off and are parked: they never block newer ones (issue 15). */
describe("stale-charge sweep: back-off and parking", () => {
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

  it(`${STALE_CHARGE_BATCH} permanently failing rows do not block a newer one; they back off, then are parked and reported`, async () => {
    const { api } = await sys.createMerchant();
    const { subscriptionId } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "2", interval: "DAY" }, credits: { USDT_TRON: "10" } });
    // Failing rows: their wallet user does not exist, so every wallet call fails.
    for (let g = 1; g <= STALE_CHARGE_BATCH; g++) {
      await make.charge(sys, {
        subscriptionId,
        walletUserId: randomUUID(),
        period: { index: 1000 + g },
        amount: 1,
        createdSecondsAgo: 3600 - g,
        leaseSeconds: -1,
      });
    }
    // The newer row that can settle: the renewal of period 1, left PENDING by a crash.
    const active = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    const { id: good } = await make.charge(sys, { subscriptionId, amount: 2, leaseSeconds: -1 });

    // First sweep: the oldest batch, all failing; each backs off.
    expect(await settleStaleCharges(sys.context(), ports)).to.equal(0);
    const [backedOff] = await sys.sql<{ n: number }>(
      "select count(*)::int as n from subscription_charges where settle_failures = 1 and next_settle_at is not null",
    );
    expect(backedOff!.n).to.equal(STALE_CHARGE_BATCH);
    // Second sweep: rows never tried come first, so the newer row settles whatever the failing ones do.
    expect(await settleStaleCharges(sys.context(), ports)).to.equal(1);
    expect((await chargesOf(sys, subscriptionId)).find((c) => c.id === good)!.status).to.equal("SUCCEEDED");

    // A row that keeps failing is parked after MAX_SETTLE_FAILURES and reported by reconciliation (time passes: back-off and leases run out).
    await sys.sql(
      "update subscription_charges set settle_failures = ?, next_settle_at = null, lease_until = now() - interval '1 second' where status = 'PENDING'",
      [MAX_SETTLE_FAILURES - 1],
    );
    await settleStaleCharges(sys.context(), ports);
    const [parked] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_charges where parked_at is not null");
    expect(parked!.n).to.equal(STALE_CHARGE_BATCH);
    expect(await settleStaleCharges(sys.context(), ports)).to.equal(0);
    const [tried] = await sys.sql<{ n: number }>("select max(settle_failures)::int as n from subscription_charges");
    expect(tried!.n).to.equal(MAX_SETTLE_FAILURES);
    const report = await sys.admin.get("/admin/v1/reconciliation");
    expect(report.body.anomalies.filter((a: any) => a.kind === "PARKED_ROW")).to.have.length(STALE_CHARGE_BATCH);
  });
});
