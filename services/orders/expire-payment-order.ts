import type { UseCaseContext } from "../platform/use-case.ts";
import { PaymentOrder } from "./entities.ts";
import { OPEN_STATUSES } from "./order-status.ts";
import { lockOrder } from "./order-store.ts";
import { expireInPlace } from "./reconcile-order.ts";

interface ExpireResult {
  expired: boolean;
  creditIds: string[];
}

/**
 * Expires one order if it is still open and its time is up on the service
 * clock; anything else (paid meanwhile, not yet due) is a no-op, so the
 * delayed job and the sweep may both run it, in any order, any number of times.
 */
export async function expirePaymentOrder(ctx: UseCaseContext, orderId: string): Promise<ExpireResult> {
  return ctx.em.transactional(async (em) => {
    const state = await lockOrder(em, { id: orderId });
    if (!state || !OPEN_STATUSES.includes(state.order.status)) return { expired: false, creditIds: [] };
    if (ctx.clock.now().getTime() < state.order.expiresAt.getTime()) return { expired: false, creditIds: [] };
    return { expired: true, ...expireInPlace(em, ctx.clock, state) };
  });
}

const EXPIRY_SWEEP_BATCH = 500;

/**
 * The Postgres side of expiry: every open order past its time, oldest first,
 * in bounded batches. Callers sync the clock first (sandbox offsets move).
 */
export async function expireDueOrders(ctx: UseCaseContext, limit = EXPIRY_SWEEP_BATCH): Promise<ExpireResult & { count: number }> {
  const due = await ctx.em.find(
    PaymentOrder,
    { status: { $in: [...OPEN_STATUSES] }, expiresAt: { $lte: ctx.clock.now() } },
    { fields: ["id"], orderBy: { expiresAt: "asc" }, limit },
  );
  let count = 0;
  const creditIds: string[] = [];
  for (const { id } of due) {
    const res = await expirePaymentOrder({ em: ctx.em.fork(), clock: ctx.clock }, id);
    if (res.expired) count++;
    creditIds.push(...res.creditIds);
  }
  return { expired: count > 0, count, creditIds };
}
