import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { amount, formatAmount, isZero } from "../../platform/money.ts";
import type { ChargeRow } from "../entities.ts";
import { SubscriptionRefund, type RefundRow } from "./refund-entities.ts";
import { settleRefund, type RefundPorts, type RefundSettlement } from "./settle-refund.ts";

/**
 * A refund of a whole charge whose purpose fell through after the money
 * moved (a plan change paid for that no longer applies), written as a PENDING
 * row in the caller's transaction: the one that marks the charge SUCCEEDED,
 * so the refund cannot be lost between two commits. It carries no lease, so
 * the subscriptions sweep settles it like a refund a crash left behind
 * (settle-refund.ts, key refund-<id>); a caller with the customer waiting
 * settles it at once (settleAutomaticRefund). Undefined when nothing moved.
 */
export function openAutomaticRefund(
  em: EntityManager,
  clock: Clock,
  charge: ChargeRow,
  reason: string,
  metadata: Record<string, unknown>,
): RefundRow | undefined {
  if (charge.assetAmount == null || isZero(amount(charge.assetAmount))) return undefined;
  return em.create(SubscriptionRefund, {
    id: randomUUID(),
    merchantId: charge.merchantId,
    chargeId: charge.id,
    subscriptionId: charge.subscriptionId,
    walletUserId: charge.walletUserId,
    amount: formatAmount(charge.amount),
    currency: charge.currency,
    asset: charge.asset,
    assetAmount: formatAmount(charge.assetAmount),
    status: "PENDING",
    owed: true,
    failureReason: null,
    reason,
    metadata,
    idempotencyKey: null,
    walletTransactionId: null,
    leaseUntil: null,
    createdAt: clock.now(),
    settledAt: null,
  });
}

/** Settles the charge's pending refund now (the automatic one: the charge has just succeeded); undefined when there is none. */
export async function settleAutomaticRefund(ctx: UseCaseContext, ports: RefundPorts, chargeId: string): Promise<RefundSettlement | undefined> {
  const pending = await ctx.em.fork().findOne(SubscriptionRefund, { chargeId, status: "PENDING" }, { orderBy: { createdAt: "asc" } });
  if (!pending) return undefined;
  return settleRefund({ em: ctx.em.fork(), clock: ctx.clock }, ports, pending.id, undefined);
}
