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
    await sys.sql(
      `insert into subscription_charges (id, subscription_id, merchant_id, wallet_user_id, period_index, period_start, period_end,
         amount, currency, asset, asset_amount, rate, status, attempt, created_at, lease_until, purpose)
       select gen_random_uuid(), s.id, s.merchant_id, gen_random_uuid(), 1000 + g, now(), now() + interval '1 day', 1, 'USD', 'USDT_TRON', 1, 1, 'PENDING', 1,
              now() - interval '1 hour' + g * interval '1 second', now() - interval '1 second', 'RENEWAL'
         from subscriptions s, generate_series(1, ?) g where s.id = ?`,
      [STALE_CHARGE_BATCH, subscriptionId],
    );
    // The newer row that can settle: the renewal of period 1, left PENDING by a crash.
    const active = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    const good = randomUUID();
    await sys.sql(
      `insert into subscription_charges (id, subscription_id, merchant_id, wallet_user_id, period_index, period_start, period_end,
         amount, currency, asset, asset_amount, rate, status, attempt, created_at, lease_until, purpose)
       select ?, id, merchant_id, wallet_user_id, 1, next_billing_at, next_billing_at + interval '1 day', 2, 'USD', 'USDT_TRON', 2, 1, 'PENDING', 1, now(), now() - interval '1 second', 'RENEWAL'
         from subscriptions where id = ?`,
      [good, subscriptionId],
    );

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
