import { handleJob, handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { expireDueOrders, expirePaymentOrder } from "./expire-payment-order.ts";
import { settleCredit, settlePendingCredits } from "./settle-credit.ts";
import { walletPort } from "./wallet-port.ts";
import { creditMerchantKind, expirePaymentOrderKind, paymentOrdersSweep, scheduleCredits } from "./order-queue.ts";

/** Handlers of the `payments` group (kinds and enqueueing: order-queue.ts). */
export const orderJobs = [
  handleJob(expirePaymentOrderKind, async (deps, payload) => {
    await deps.clock.sync();
    const res = await expirePaymentOrder(contextFor(deps), payload.orderId);
    await scheduleCredits(deps.queues, res.creditIds);
  }),
  handleJob(creditMerchantKind, async (deps, payload) => {
    await settleCredit(contextFor(deps), walletPort(deps), payload.creditId, deps.logger);
  }),
  handleSweep(paymentOrdersSweep, async (deps) => {
    await deps.clock.sync();
    const expired = await expireDueOrders(contextFor(deps));
    await scheduleCredits(deps.queues, expired.creditIds);
    // Each failure keeps its credit PENDING (failures, back-off and last_error on the row) for a later sweep.
    await settlePendingCredits(contextFor(deps), walletPort(deps), deps.logger);
  }),
];
