import { randomUUID } from "node:crypto";
import { LockMode, UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict, invalid, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { parseAmountField } from "../../platform/amount-input.ts";
import { amount, equals, formatAmount } from "../../platform/money.ts";
import { characterCount } from "../../platform/text.ts";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { REFUND_ERRORS, REFUND_REASON_MAX_LENGTH } from "./contract.ts";
import { refundAmounts } from "./refund-amount.ts";
import { SubscriptionRefund, type RefundRow } from "./refund-entities.ts";
import { reservedRefundTotals } from "./refund-store.ts";
import { takeLease } from "../../platform/wallet-calls/wallet-call.ts";
import { merchantBalanceInsufficient, refundInProgress, REFUNDS_TABLE, settleRefund } from "./settle-refund.ts";

/** The wallet's asset registry (code → decimals); the caller may cache it, the registry changes only with a deploy. */
export type AssetDecimals = (code: string) => Promise<number | undefined>;

interface CreateRefundInput {
  merchantId: string;
  chargeId: string;
  /** In the charge's currency; undefined: everything not yet refunded. */
  amount?: string | undefined;
  reason?: string | undefined;
  metadata: Record<string, unknown>;
  idempotencyKey?: string | undefined;
}

const chargeNotFound = (id: string) => notFound(REFUND_ERRORS.chargeNotFound, `charge ${id} not found`);

/**
 * Gives (part of) a subscription charge back, in the asset that was charged,
 * to the wallet account that paid. Three steps, like a charge:
 *  1. under the charge's row lock, what remains refundable is the charge
 *     minus its SUCCEEDED and PENDING refunds; the new PENDING row reserves
 *     its amount and commits (so parallel refunds of one charge can never
 *     add up to more than it);
 *  2. the wallet moves the money (settle-refund.ts), never overdrawing the merchant;
 *  3. the row becomes SUCCEEDED (charge totals, event) or FAILED (nothing moved).
 * The subscription is not touched: its status and billing dates stay as they are.
 */
export async function createRefund(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: CreateRefundInput,
  assetDecimals: AssetDecimals = registryDecimals(ports),
): Promise<{ refund: RefundRow; charge: ChargeRow }> {
  const requested = input.amount === undefined || input.amount === "" ? undefined : parseAmountField("amount", input.amount, { positive: true });
  if (input.reason !== undefined && characterCount(input.reason) > REFUND_REASON_MAX_LENGTH) {
    throw invalid("INVALID_REQUEST", `reason: must be at most ${REFUND_REASON_MAX_LENGTH} characters`);
  }
  if (input.idempotencyKey !== undefined && (input.idempotencyKey === "" || input.idempotencyKey.length > 200)) {
    throw invalid("INVALID_REQUEST", "idempotencyKey: must be 1 to 200 characters");
  }
  if (!isUuid(input.chargeId)) throw chargeNotFound(input.chargeId);

  const earlier = await findByKey(ctx, input);
  if (earlier) return finish(ctx, ports, earlier.id, undefined);

  // What the charge is in, and its asset's decimals, are read before any lock is taken (the asset never changes).
  const chargeAsset = await ctx.em.fork().findOne(SubscriptionCharge, { id: input.chargeId, merchantId: input.merchantId }, { fields: ["asset"] });
  if (!chargeAsset) throw chargeNotFound(input.chargeId);
  const decimals = await assetDecimals(chargeAsset.asset);
  if (decimals === undefined) throw new Error(`charge ${input.chargeId} is in ${chargeAsset.asset}, which the wallet no longer lists`);
  let written: RefundRow;
  let generation = 0;
  try {
    written = await ctx.em.transactional(async (em) => {
      const charge = await em.findOne(
        SubscriptionCharge,
        { id: input.chargeId, merchantId: input.merchantId },
        { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
      );
      if (!charge) throw chargeNotFound(input.chargeId);
      if (charge.status !== "SUCCEEDED") {
        throw conflict(REFUND_ERRORS.chargeNotRefundable, `charge ${charge.id} is ${charge.status}: only a SUCCEEDED charge can be refunded`);
      }
      if (charge.assetAmount == null || charge.rate == null) {
        throw conflict(REFUND_ERRORS.chargeNotRefundable, `charge ${charge.id} moved no money: there is nothing to refund`);
      }
      const reserved = await reservedRefundTotals(em, charge.id);
      const amounts = refundAmounts(
        {
          amount: charge.amount,
          currency: charge.currency,
          assetAmount: charge.assetAmount,
          asset: charge.asset,
          rate: charge.rate,
          reservedAmount: reserved.amount,
          reservedAssetAmount: reserved.assetAmount,
        },
        requested,
        decimals,
      );
      const refund = em.create(SubscriptionRefund, {
        id: randomUUID(),
        merchantId: charge.merchantId,
        chargeId: charge.id,
        subscriptionId: charge.subscriptionId,
        walletUserId: charge.walletUserId,
        amount: formatAmount(amounts.amount),
        currency: charge.currency,
        asset: charge.asset,
        assetAmount: formatAmount(amounts.assetAmount),
        status: "PENDING",
        failureReason: null,
        reason: input.reason ?? null,
        metadata: input.metadata,
        idempotencyKey: input.idempotencyKey ?? null,
        walletTransactionId: null,
        leaseUntil: null,
        createdAt: ctx.clock.now(),
        settledAt: null,
      });
      await em.flush();
      const leased = await takeLease(em, REFUNDS_TABLE, refund.id);
      if (leased === null) throw new Error(`refund ${refund.id} could not be leased by its opener`);
      generation = leased;
      return refund;
    });
  } catch (err) {
    // The same key in parallel: the loser answers with the winner's refund.
    if (err instanceof UniqueConstraintViolationException && input.idempotencyKey !== undefined) {
      const winner = await findByKey({ em: ctx.em.fork(), clock: ctx.clock }, input);
      if (winner) return finish(ctx, ports, winner.id, undefined);
    }
    throw err;
  }
  return finish(ctx, ports, written.id, generation);
}

/** Asks the wallet for the registry on every call (the RPC adapter caches it instead). */
export const registryDecimals =
  (ports: SubscriptionPorts): AssetDecimals =>
  async (code) =>
    (await ports.wallet.listAssets({})).assets.find((a) => a.code === code)?.decimals;

/** A refund recorded under the merchant's Idempotency-Key; the same key for another request is a 409. */
async function findByKey(ctx: UseCaseContext, input: CreateRefundInput): Promise<RefundRow | null> {
  if (input.idempotencyKey === undefined) return null;
  const row = await ctx.em.fork().findOne(SubscriptionRefund, { merchantId: input.merchantId, idempotencyKey: input.idempotencyKey });
  if (!row) return null;
  const same =
    row.chargeId === input.chargeId.toLowerCase() && (input.amount === undefined || input.amount === "" || equals(amount(row.amount), amount(input.amount)));
  if (!same) throw conflict("IDEMPOTENCY_KEY_REUSED", "Idempotency-Key was already used for a different refund");
  return row;
}

async function finish(ctx: UseCaseContext, ports: SubscriptionPorts, refundId: string, held: number | undefined) {
  const settled = await settleRefund({ em: ctx.em.fork(), clock: ctx.clock }, ports, refundId, held);
  if (settled.state === "in_progress") throw refundInProgress();
  if (settled.state === "failed") throw merchantBalanceInsufficient(settled.refund.asset, settled.merchantBalance ?? "too low");
  return { refund: settled.refund, charge: settled.charge };
}
