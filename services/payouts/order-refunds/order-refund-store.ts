import type { EntityManager } from "@mikro-orm/postgresql";
import { oldestOf } from "../../platform/observability/due-work.ts";
import { sqlStatus } from "../../platform/status-machine.ts";
import { COUNTED_REFUND_STATUSES } from "../contract.ts";
import { orderRefundMachine } from "./order-refund-status.ts";

/** The order refunds' statements, each on the caller's entity manager (in its transaction). */

/**
 * One refund of an order at a time decides what remains: a transaction-scoped
 * advisory lock on the order id, held until the caller's transaction ends.
 */
export async function lockOrderForRefund(em: EntityManager, orderId: string): Promise<void> {
  await em.execute("select pg_advisory_xact_lock(hashtextextended(?, 0))", [`order-refunds:${orderId}`]);
}

/** Everything refunded of the order so far (given or on its way), as a decimal string; read under lockOrderForRefund. */
export async function refundedSoFar(em: EntityManager, orderId: string): Promise<string> {
  const [row] = await em.execute<{ total: string | null }[]>(
    `select sum(amount)::text as total from order_refunds where payment_order_id = ? and status in (${COUNTED_REFUND_STATUSES.map(() => "?").join(", ")})`,
    [orderId, ...COUNTED_REFUND_STATUSES],
  );
  return row?.total ?? "0";
}

const AWAITING_ADDRESS = sqlStatus(orderRefundMachine.statuses, "AWAITING_ADDRESS");

/** expireDueClaims' condition: claims still AWAITING_ADDRESS past their expiry. */
export const oldestDueClaimExpiry = (em: EntityManager, now: Date) =>
  oldestOf(em, `select min(claim_expires_at) as oldest from order_refunds where status = ${AWAITING_ADDRESS} and claim_expires_at <= ?`, [now]);
