import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict, DomainError, invalid, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { parseAmountField } from "../../platform/amount-input.ts";
import { amount, compare, equals, formatAmount, fractionDigits, isZero, sub, zero } from "../../platform/money.ts";
import { takeLease } from "../../platform/wallet-calls/wallet-call.ts";
import { CLAIM_EXPIRES_DEFAULT_MINUTES, CLAIM_EXPIRES_MAX_MINUTES, CLAIM_EXPIRES_MIN_MINUTES, PAYOUT_ERRORS } from "../contract.ts";
import { OrderRefund, Payout, type OrderRefundRow } from "../entities.ts";
import { canonicalPayoutAddress } from "../addresses/payout-address.ts";
import type { PayoutPorts } from "../payout-ports.ts";
import { assetOf, openCall, payoutsUnavailable } from "../payout-calls.ts";
import { PAYOUT_CALLS_TABLE } from "../payout-store.ts";
import { lockOrderForRefund, refundedSoFar } from "./order-refund-store.ts";
import { finish } from "../create-payout.ts";
import { hashClaimToken } from "./claim-token.ts";

interface CreateOrderRefundInput {
  merchantId: string;
  paymentOrderId: string;
  amount?: string | undefined;
  address?: string | undefined;
  /** 0 or undefined: the default (10080, a week). */
  expiresInMinutes?: number | undefined;
  idempotencyKey?: string | undefined;
}

export const orderNotFound = (id: string) => notFound(PAYOUT_ERRORS.orderNotFound, `payment order ${id} not found`);

/**
 * A merchant refunds a payment order to the customer's address:
 *  1. the order's confirmed money (the orders service) minus what was
 *     refunded so far, computed under a transaction-scoped lock on the order
 *     id, bounds the amount (default: all of it); the refund row, its payout
 *     (source ORDER_REFUND; no address yet when the customer will claim it)
 *     and the payout's DEBIT call (leased to this caller) commit together;
 *  2. the wallet reserves amount + fee from the balance (ledger kind
 *     ORDER_REFUND, key order-refund-<id>) under the merchant account's lock,
 *     the lock refunds and payouts check the same balance under, or refuses
 *     (409 MERCHANT_BALANCE_INSUFFICIENT; nothing moved; the row is REFUSED,
 *     never shown, its Idempotency-Key freed);
 *  3. the settle makes the payout PENDING (an address was given: it goes to
 *     the chain at once, no cooling period) or AWAITING_ADDRESS (the claim
 *     link), and records payment_order.refund_created.
 * A crash anywhere leaves PENDING calls the payouts sweep finishes with the same keys.
 */
export async function createOrderRefund(ctx: UseCaseContext, ports: PayoutPorts, input: CreateOrderRefundInput): Promise<OrderRefundRow> {
  if (!ports.chain) throw payoutsUnavailable();
  if (input.idempotencyKey !== undefined && (input.idempotencyKey === "" || input.idempotencyKey.length > 200)) {
    throw invalid("INVALID_REQUEST", "idempotencyKey: must be 1 to 200 characters");
  }
  const requested = input.amount === undefined ? undefined : parseAmountField("amount", input.amount, { positive: true });
  const minutes = input.expiresInMinutes || CLAIM_EXPIRES_DEFAULT_MINUTES;
  if (!Number.isInteger(minutes) || minutes < CLAIM_EXPIRES_MIN_MINUTES || minutes > CLAIM_EXPIRES_MAX_MINUTES) {
    throw invalid("INVALID_REQUEST", `expiresInMinutes: must be an integer from ${CLAIM_EXPIRES_MIN_MINUTES} to ${CLAIM_EXPIRES_MAX_MINUTES}`);
  }
  if (!isUuid(input.paymentOrderId)) throw orderNotFound(input.paymentOrderId);
  const orderId = input.paymentOrderId.toLowerCase();

  const earlier = await findByKey(ctx, input, orderId);
  if (earlier) return settledRefund(ctx, ports, earlier.id, earlier.payoutId, undefined);

  const order = await ports.orders.refundable(input.merchantId, orderId);
  if (!order) throw orderNotFound(input.paymentOrderId);
  const asset = await assetOf(ports, order.asset);
  const address = input.address === undefined ? null : canonicalPayoutAddress(asset.network, input.address, ports.addressChain);
  if (requested && fractionDigits(requested) > asset.decimals)
    throw invalid("INVALID_REQUEST", `amount: must have at most ${asset.decimals} decimals for ${asset.code}`);
  if (isZero(amount(order.confirmed))) {
    throw conflict(PAYOUT_ERRORS.orderNotRefundable, `payment order ${order.id} has no confirmed payment to refund`);
  }

  let opened: { refundId: string; payoutId: string; generation: number };
  try {
    opened = await ctx.em.transactional(async (em) => {
      // One refund of an order at a time decides what remains: the lock is the order id's, for this transaction.
      await lockOrderForRefund(em, order.id);
      const remaining = sub(amount(order.confirmed), amount(await refundedSoFar(em, order.id)));
      const value = requested ?? remaining;
      if (compare(value, zero()) <= 0 || compare(value, remaining) > 0) {
        throw conflict(
          PAYOUT_ERRORS.refundExceedsPayment,
          `the refund is more than remains refundable of this order: ${formatAmount(compare(remaining, zero()) > 0 ? remaining : zero())} ${asset.code} (confirmed payments ${formatAmount(order.confirmed)} minus refunds so far)`,
        );
      }
      if (compare(value, amount(asset.payoutMinimum)) < 0) {
        throw invalid(
          "INVALID_REQUEST",
          `amount: must be at least the ${asset.code} payout minimum of ${asset.payoutMinimum} (the refund is ${formatAmount(value)})`,
        );
      }
      const now = ctx.clock.now();
      const refundId = randomUUID();
      const payout = em.create(Payout, {
        id: randomUUID(),
        merchantId: input.merchantId,
        source: "ORDER_REFUND",
        sourceId: refundId,
        destinationId: null,
        asset: asset.code,
        network: asset.network,
        address,
        amount: formatAmount(value),
        fee: formatAmount(asset.payoutFee),
        status: "OPENING",
        txHash: null,
        failureReason: null,
        metadata: { paymentOrderId: order.id, orderRefundId: refundId },
        idempotencyKey: null,
        debitedAt: null,
        reversedAt: null,
        submittedAt: null,
        paidAt: null,
        failedAt: null,
        cancelledAt: null,
        // Decision: no review for refunds: the amount is bounded by what this order brought in.
        reviewRequired: false,
        nextChainCheckAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await em.flush();
      em.create(OrderRefund, {
        id: refundId,
        merchantId: input.merchantId,
        paymentOrderId: order.id,
        payoutId: payout.id,
        asset: asset.code,
        amount: formatAmount(value),
        status: "OPENING",
        address,
        claimTokenHash: address === null ? hashClaimToken(ports.claimLinks.token(refundId)) : null,
        claimExpiresAt: address === null ? new Date(now.getTime() + minutes * 60_000) : null,
        idempotencyKey: input.idempotencyKey ?? null,
        createdAt: now,
        updatedAt: now,
      });
      const call = openCall(em, now, payout, "DEBIT");
      await em.flush();
      const generation = await takeLease(em, PAYOUT_CALLS_TABLE, call.id);
      if (generation === null) throw new Error(`payout call ${call.id} could not be leased by its opener`);
      return { refundId, payoutId: payout.id, generation };
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException && input.idempotencyKey !== undefined) {
      const winner = await findByKey(ctx, input, orderId);
      if (winner) return settledRefund(ctx, ports, winner.id, winner.payoutId, undefined);
    }
    throw err;
  }
  return settledRefund(ctx, ports, opened.refundId, opened.payoutId, opened.generation);
}

/** A refund recorded under the merchant's Idempotency-Key; the same key for another request is a 409. */
async function findByKey(ctx: UseCaseContext, input: CreateOrderRefundInput, orderId: string): Promise<OrderRefundRow | null> {
  if (input.idempotencyKey === undefined) return null;
  const row = await ctx.em.fork().findOne(OrderRefund, { merchantId: input.merchantId, idempotencyKey: input.idempotencyKey });
  if (!row) return null;
  const same = row.paymentOrderId === orderId && (input.amount === undefined || equals(amount(row.amount), amount(input.amount)));
  if (!same) throw conflict("IDEMPOTENCY_KEY_REUSED", "Idempotency-Key was already used for a different refund");
  return row;
}

const refundInProgress = () => new DomainError("failed_precondition", PAYOUT_ERRORS.refundInProgress, "this refund is being opened; try again in a moment");

/** Steps 2 and 3 (the payout's DEBIT call), then the refund as it is. */
async function settledRefund(ctx: UseCaseContext, ports: PayoutPorts, refundId: string, payoutId: string, held: number | undefined): Promise<OrderRefundRow> {
  await finish(ctx, ports, payoutId, held);
  const refund = await ctx.em.fork().findOneOrFail(OrderRefund, { id: refundId });
  if (refund.status === "OPENING") throw refundInProgress();
  return refund;
}
