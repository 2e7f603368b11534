import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { OrderRefund, Payout } from "../entities.ts";
import type { PayoutPorts } from "../payout-ports.ts";
import { failPayout, tryPayoutCall } from "../payout-calls.ts";

/**
 * One claim past its time: its payout (AWAITING_ADDRESS) becomes EXPIRED and
 * its REVERSAL call is opened in the same transaction (the refund EXPIRED,
 * payment_order.refund_expired), then carried to the wallet: the reserved
 * amount + fee return to the balance (ORDER_REFUND, key
 * order-refund-return-<id>). The sweep finishes a reversal that fails now.
 */
export async function expireClaim(ctx: UseCaseContext, ports: PayoutPorts, refundId: string): Promise<boolean> {
  const reversalId = await ctx.em.fork().transactional(async (em) => {
    const refund = await em.findOneOrFail(OrderRefund, { id: refundId });
    const payout = await em.findOneOrFail(Payout, { id: refund.payoutId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (payout.status !== "AWAITING_ADDRESS" || !refund.claimExpiresAt || refund.claimExpiresAt > ctx.clock.now()) return null;
    return (await failPayout(em, ctx.clock, ports, payout, "claim_expired", null)).id;
  });
  if (!reversalId) return false;
  await tryPayoutCall({ em: ctx.em.fork(), clock: ctx.clock }, ports, reversalId);
  return true;
}

/** The sweep's part: claims past their time on the service clock, found in Postgres (nothing in Redis has to survive). */
export async function expireDueClaims(ctx: UseCaseContext, ports: PayoutPorts, limit = 100): Promise<number> {
  const due = await ctx.em
    .fork()
    .find(
      OrderRefund,
      { status: "AWAITING_ADDRESS", claimExpiresAt: { $lte: ctx.clock.now() } },
      { orderBy: { claimExpiresAt: "asc" }, limit, fields: ["id"] },
    );
  let expired = 0;
  for (const r of due) if (await expireClaim(ctx, ports, r.id)) expired += 1;
  return expired;
}
