import { jobId, jobKind, sweepKind } from "../platform/queue/job-kind.ts";
import type { Clock } from "../platform/clock.ts";
import type { Queues } from "../platform/queue/queues.ts";

/**
 * The `payments` group's jobs as producers see them (handlers: jobs.ts).
 * Expiry is a delayed job per order due at expiresAt; it only makes expiry
 * prompt: the sweep finds whatever it missed (Redis flushed, sandbox clock
 * advanced), and both are no-ops on a paid order.
 */
export const expirePaymentOrderKind = jobKind<{ orderId: string }>({
  name: "payment-orders.expire",
  group: "payments",
  id: (p) => jobId("payment-order-expire", p.orderId),
});

/** Carries one merchant credit to the wallet. */
export const creditMerchantKind = jobKind<{ creditId: string }>({
  name: "payment-orders.credit-merchant",
  group: "payments",
  id: (p) => jobId("payment-order-credit", p.creditId),
});

/**
 * Every sweepIntervalMs, on the service clock: expire every open order past
 * its time, then retry every credit still PENDING (a crash between commit
 * and the wallet call, a lost job, a wallet outage): PAID orders always end
 * up credited, exactly once.
 */
export const paymentOrdersSweep = sweepKind({ name: "payment-orders.sweep", group: "payments", every: (c) => c.sweepIntervalMs });

export const orderJobKinds = [expirePaymentOrderKind, creditMerchantKind, paymentOrdersSweep];

/** After commit only. Queues.add never throws: a lost enqueue is the sweep's. */
export async function scheduleExpiry(queues: Queues, clock: Clock, order: { id: string; expiresAt: Date }): Promise<void> {
  await queues.add(expirePaymentOrderKind, { orderId: order.id }, { delay: order.expiresAt.getTime() - clock.now().getTime() });
}

export async function scheduleCredits(queues: Queues, creditIds: readonly string[]): Promise<void> {
  await queues.addBulk(
    creditMerchantKind,
    creditIds.map((creditId) => ({ creditId })),
  );
}
