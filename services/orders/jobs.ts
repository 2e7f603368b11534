import { defineJob, jobId } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import type { Clock } from "../platform/clock.ts";
import type { Queues } from "../platform/queue/queues.ts";
import { expireDueOrders, expirePaymentOrder } from "./expire-payment-order.ts";
import { settleCredit, settlePendingCredits } from "./settle-credit.ts";
import { walletPort } from "./wallet-port.ts";

/**
 * Delayed job, one per order (jobId "payment-order-expire-<id>"), due at
 * expiresAt. It only makes expiry prompt: the sweep finds whatever it missed
 * (Redis flushed, sandbox clock advanced), and both are no-ops on a paid order.
 */
export const expirePaymentOrderJob = defineJob<{ orderId: string }>({
  name: "payment-orders.expire",
  group: "payments",
  async handle(deps, payload) {
    await deps.clock.sync();
    const res = await expirePaymentOrder(contextFor(deps), payload.orderId);
    await scheduleCredits(deps.queues, res.creditIds);
  },
});

/** Carries one merchant credit to the wallet (jobId "payment-order-credit-<id>"). */
export const creditMerchantJob = defineJob<{ creditId: string }>({
  name: "payment-orders.credit-merchant",
  group: "payments",
  async handle(deps, payload) {
    await settleCredit(contextFor(deps), walletPort(deps), payload.creditId);
  },
});

/**
 * Every sweepIntervalMs, on the service clock: expire every open order past
 * its time, then retry every credit still PENDING (a crash between commit
 * and the wallet call, a lost job, a wallet outage): PAID orders always end
 * up credited, exactly once.
 */
export const paymentOrdersSweepJob = defineJob<Record<string, never>>({
  name: "payment-orders.sweep",
  group: "payments",
  every: (c) => c.sweepIntervalMs,
  async handle(deps) {
    await deps.clock.sync();
    const expired = await expireDueOrders(contextFor(deps));
    await scheduleCredits(deps.queues, expired.creditIds);
    const credits = await settlePendingCredits(contextFor(deps), walletPort(deps));
    // Each failure keeps its credit PENDING (attempts and last_error on the row) for the next sweep.
    if (credits.failed > 0) deps.logger.warn({ failed: credits.failed }, "payment-order credits failed; retrying on the next sweep");
  },
});

export const orderJobs = [expirePaymentOrderJob, creditMerchantJob, paymentOrdersSweepJob];

/** After commit only. Queues.add never throws: a lost enqueue is the sweep's. */
export async function scheduleExpiry(queues: Queues, clock: Clock, order: { id: string; expiresAt: Date }): Promise<void> {
  const delay = Math.max(0, order.expiresAt.getTime() - clock.now().getTime());
  await queues.add(expirePaymentOrderJob, { orderId: order.id }, { jobId: jobId("payment-order-expire", order.id), delay });
}

export async function scheduleCredits(queues: Queues, creditIds: readonly string[]): Promise<void> {
  await Promise.all(creditIds.map((creditId) => queues.add(creditMerchantJob, { creditId }, { jobId: jobId("payment-order-credit", creditId) })));
}
