import { LockMode } from "@mikro-orm/core";
import { RefundOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError } from "../../platform/errors.ts";
import { add, amount, formatAmount } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";
import { chargeRecord } from "../subscription-record.ts";
import { WALLET_CALL_TIMEOUT_MS } from "../charges/lease.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { REFUND_ERRORS } from "./contract.ts";
import { SubscriptionRefund, type RefundRow } from "./refund-entities.ts";
import { refundRecord } from "./refund-record.ts";
import { nextRefundStatus } from "./refund-status.ts";

/** Outlasts the wallet call's timeout, so one refund's key is never in two wallet calls at once. */
export const REFUND_LEASE_SECONDS = 30;

export const refundInProgress = () =>
  new DomainError("failed_precondition", REFUND_ERRORS.inProgress, "this refund is being processed; try again in a moment");

export const merchantBalanceInsufficient = (asset: string, balance: string) =>
  new DomainError(
    "failed_precondition",
    REFUND_ERRORS.merchantBalanceInsufficient,
    `your ${asset} balance (${balance}) is below this refund; nothing was refunded`,
  );

export type RefundSettlement =
  | { state: "in_progress" }
  | { state: "succeeded"; refund: RefundRow; charge: ChargeRow }
  | { state: "failed"; refund: RefundRow; merchantBalance: string | null };

/**
 * Claims a PENDING refund for one caller until the lease (database time) runs
 * out; null when someone holds it. Every lease bumps `lease_generation`, the
 * fencing token the holder settles with (the rule of charges/lease.ts): a
 * holder stalled past its lease cannot commit over the one that took it next.
 */
export async function takeRefundLease(ctx: UseCaseContext, refundId: string): Promise<number | null> {
  const rows = await ctx.em.execute<{ lease_generation: number }[]>(
    `update subscription_refunds set lease_until = now() + make_interval(secs => ?), lease_generation = lease_generation + 1
      where id = ? and status = 'PENDING' and (lease_until is null or lease_until < now()) returning lease_generation`,
    [REFUND_LEASE_SECONDS, refundId],
  );
  return rows.length === 1 ? Number(rows[0]!.lease_generation) : null;
}

/**
 * Steps 2 and 3 of a refund (create-refund.ts did step 1, the PENDING row):
 * the wallet moves the money under the key refund-<id> (a retry of that key
 * moves nothing again), then one transaction marks the row SUCCEEDED, adds
 * it to the charge's refunded totals and records subscription.charge_refunded.
 * A merchant balance too low marks it FAILED (the reservation ends, its
 * Idempotency-Key is freed). An RPC failure leaves it PENDING with the lease
 * given back: the next caller or the sweep repeats the call with the same key.
 */
export async function settleRefund(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  refundId: string,
  /** The lease generation the caller already holds (it just wrote the row), or undefined to take one. */
  held: number | undefined,
  /** The row as the caller just wrote it (saves a read), when it holds the lease. */
  written?: RefundRow,
): Promise<RefundSettlement> {
  const generation = held ?? (await takeRefundLease(ctx, refundId));
  if (generation === null) {
    const current = await ctx.em.fork().findOneOrFail(SubscriptionRefund, { id: refundId });
    return current.status === "PENDING" ? { state: "in_progress" } : finished(ctx, current);
  }
  const refund = held !== undefined && written ? written : await ctx.em.fork().findOneOrFail(SubscriptionRefund, { id: refundId });
  if (refund.status !== "PENDING") return finished(ctx, refund);

  let res;
  try {
    res = await ports.wallet.refund(
      {
        idempotencyKey: `refund-${refund.id}`,
        merchantId: refund.merchantId,
        walletUserId: refund.walletUserId,
        asset: refund.asset,
        amount: formatAmount(refund.assetAmount),
        description: `refund of subscription charge ${refund.chargeId}`,
      },
      { timeoutMs: WALLET_CALL_TIMEOUT_MS },
    );
  } catch (err) {
    await ctx.em.execute("update subscription_refunds set lease_until = null where id = ? and status = 'PENDING' and lease_generation = ?", [refundId, generation]);
    throw err;
  }
  if (res.outcome !== RefundOutcome.SUCCEEDED && res.outcome !== RefundOutcome.MERCHANT_BALANCE_INSUFFICIENT) {
    throw new Error(`wallet answered refund ${refundId} with unknown outcome ${res.outcome}`);
  }

  return ctx.em.transactional(async (em): Promise<RefundSettlement> => {
    // Lock order: the charge, then its refunds (create-refund.ts takes the same).
    const charge = await em.findOneOrFail(SubscriptionCharge, { id: refund.chargeId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const [fence] = await em.execute<{ lease_generation: number }[]>("select lease_generation from subscription_refunds where id = ? for update", [refundId]);
    const row = await em.findOneOrFail(SubscriptionRefund, { id: refundId }, { refresh: true });
    // Fenced: a later holder took the lease meanwhile; its settle (same wallet key) decides.
    if (row.status === "PENDING" && Number(fence!.lease_generation) !== generation) return { state: "in_progress" };
    const now = ctx.clock.now();
    if (row.status !== "PENDING") {
      return row.status === "SUCCEEDED" ? { state: "succeeded", refund: row, charge } : { state: "failed", refund: row, merchantBalance: null };
    }
    row.settledAt = now;
    row.leaseUntil = null;
    if (res.outcome !== RefundOutcome.SUCCEEDED) {
      row.status = nextRefundStatus(row.status, "merchant_balance_too_low");
      row.failureReason = REFUND_ERRORS.merchantBalanceInsufficient;
      row.idempotencyKey = null;
      return { state: "failed", refund: row, merchantBalance: res.merchantBalanceAfter };
    }
    row.status = nextRefundStatus(row.status, "wallet_refunded");
    row.walletTransactionId = res.transactionId ?? null;
    charge.amountRefunded = formatAmount(add(amount(charge.amountRefunded), amount(row.amount)));
    charge.assetAmountRefunded = formatAmount(add(amount(charge.assetAmountRefunded), amount(row.assetAmount)));
    // A refund does not change the subscription: its version as it stands (read, not locked: lock order is subscription first).
    const [subject] = await em.execute<{ version: number }[]>("select version from subscriptions where id = ?", [row.subscriptionId]);
    recordEvent(em, ctx.clock, {
      merchantId: row.merchantId,
      type: "subscription.charge_refunded",
      data: { subscriptionId: row.subscriptionId, subscriptionVersion: Number(subject!.version), charge: chargeRecord(charge), refund: refundRecord(row) },
    });
    return { state: "succeeded", refund: row, charge };
  });
}

async function finished(ctx: UseCaseContext, refund: RefundRow): Promise<RefundSettlement> {
  if (refund.status === "FAILED") return { state: "failed", refund, merchantBalance: null };
  const charge = await ctx.em.fork().findOneOrFail(SubscriptionCharge, { id: refund.chargeId });
  return { state: "succeeded", refund, charge };
}

/** The sweep's part: refunds a crash left PENDING (lease run out) are finished with the same wallet key. */
export async function settleStaleRefunds(ctx: UseCaseContext, ports: SubscriptionPorts): Promise<number> {
  const stale = await ctx.em.execute<{ id: string }[]>(
    `select id from subscription_refunds where status = 'PENDING' and (lease_until is null or lease_until < now())
      order by created_at limit 100`,
  );
  let settled = 0;
  for (const { id } of stale) {
    try {
      const res = await settleRefund({ em: ctx.em.fork(), clock: ctx.clock }, ports, id, undefined);
      if (res.state !== "in_progress") settled += 1;
    } catch (err) {
      ports.logger.warn({ err, refundId: id }, "could not settle a pending refund; the next sweep retries");
    }
  }
  return settled;
}
