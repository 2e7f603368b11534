import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, DomainError, invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { parseAmountField } from "../platform/amount-input.ts";
import { add, amount, compare, equals, fractionDigits, formatAmount } from "../platform/money.ts";
import { takeLease } from "../platform/wallet-calls/wallet-call.ts";
import { PAYOUT_ERRORS } from "./contract.ts";
import { Payout, type PayoutRow } from "./entities.ts";
import { destinationNotFound, getDestination } from "./destinations.ts";
import { destinationStatus } from "./payout-records.ts";
import type { PayoutPorts } from "./payout-ports.ts";
import { assetOf, openCall, payoutsUnavailable, runPayoutCall } from "./payout-calls.ts";
import { debitCallIdOf, PAYOUT_CALLS_TABLE } from "./payout-store.ts";

interface CreatePayoutInput {
  merchantId: string;
  destinationId: string;
  amount: string;
  metadata: Record<string, unknown>;
  idempotencyKey?: string | undefined;
}

const payoutInProgress = () => new DomainError("failed_precondition", PAYOUT_ERRORS.inProgress, "this payout is being opened; try again in a moment");

const merchantBalanceInsufficient = (asset: string, balance: string, needed: string) =>
  new DomainError(
    "failed_precondition",
    PAYOUT_ERRORS.merchantBalanceInsufficient,
    `your available ${asset} balance (${balance}) is below this payout's amount + fee (${needed}); nothing moved`,
  );

/**
 * A merchant pays out to one of its ACTIVE destinations:
 *  1. the payout row (OPENING, never shown) and its DEBIT call (leased to
 *     this caller) commit together;
 *  2. the wallet moves amount + fee from the balance to the PAYOUTS account
 *     under the merchant account's lock, the one refunds check under, or
 *     refuses (MERCHANT_BALANCE_INSUFFICIENT: the row ends REFUSED, never
 *     shown, its Idempotency-Key freed; nothing moved);
 *  3. the settle makes it PENDING (or IN_REVIEW above the merchant's review
 *     threshold), records payout.created and opens the SUBMIT call, which a
 *     job carries to the chain at once (the sweep if the job is lost).
 * A crash anywhere leaves PENDING calls the sweep finishes with the same keys.
 */
export async function createPayout(ctx: UseCaseContext, ports: PayoutPorts, input: CreatePayoutInput): Promise<PayoutRow> {
  if (!ports.chain) throw payoutsUnavailable();
  if (input.idempotencyKey !== undefined && (input.idempotencyKey === "" || input.idempotencyKey.length > 200)) {
    throw invalid("INVALID_REQUEST", "idempotencyKey: must be 1 to 200 characters");
  }
  const requested = parseAmountField("amount", input.amount, { positive: true });
  if (!isUuid(input.destinationId)) throw destinationNotFound(input.destinationId);

  const earlier = await findByKey(ctx, input);
  if (earlier) return finish(ctx, ports, earlier.id, undefined);

  const destination = await getDestination(ctx, input.merchantId, input.destinationId);
  const asset = await assetOf(ports, destination.asset);
  if (fractionDigits(requested) > asset.decimals) throw invalid("INVALID_REQUEST", `amount: must have at most ${asset.decimals} decimals for ${asset.code}`);
  if (compare(requested, amount(asset.payoutMinimum)) < 0) {
    throw invalid("INVALID_REQUEST", `amount: must be at least the ${asset.code} payout minimum of ${asset.payoutMinimum}`);
  }
  const status = destinationStatus(destination, ctx.clock.now());
  if (status !== "ACTIVE") {
    throw conflict(
      PAYOUT_ERRORS.destinationNotActive,
      status === "REMOVED"
        ? `payout destination ${destination.id} was removed`
        : `payout destination ${destination.id} is in its cooling period until ${destination.activatesAt.toISOString()}`,
    );
  }
  // The review decision is made before any lock (a quote is an RPC): worth more than the threshold in USD → IN_REVIEW.
  const threshold = await ports.reviewAbove(input.merchantId);
  const reviewRequired =
    threshold !== null && compare(requested, amount(await ports.wallet.quoteDown({ amount: threshold, currency: "USD", asset: asset.code }))) > 0;

  let opened: { id: string; callId: string; generation: number };
  try {
    opened = await ctx.em.transactional(async (em) => {
      const now = ctx.clock.now();
      const payout = em.create(Payout, {
        id: randomUUID(),
        merchantId: input.merchantId,
        source: "MERCHANT",
        sourceId: null,
        destinationId: destination.id,
        asset: asset.code,
        network: destination.network,
        address: destination.address,
        amount: formatAmount(requested),
        fee: formatAmount(asset.payoutFee),
        status: "OPENING",
        txHash: null,
        failureReason: null,
        metadata: input.metadata,
        idempotencyKey: input.idempotencyKey ?? null,
        debitedAt: null,
        reversedAt: null,
        submittedAt: null,
        paidAt: null,
        failedAt: null,
        cancelledAt: null,
        reviewRequired,
        nextChainCheckAt: null,
        createdAt: now,
        updatedAt: now,
      });
      // No ORM relation orders the inserts: the payout first, then its call (foreign key).
      await em.flush();
      const call = openCall(em, now, payout, "DEBIT");
      await em.flush();
      const generation = await takeLease(em, PAYOUT_CALLS_TABLE, call.id);
      if (generation === null) throw new Error(`payout call ${call.id} could not be leased by its opener`);
      return { id: payout.id, callId: call.id, generation };
    });
  } catch (err) {
    // The same key in parallel: the loser answers with the winner's payout.
    if (err instanceof UniqueConstraintViolationException && input.idempotencyKey !== undefined) {
      const winner = await findByKey({ em: ctx.em.fork(), clock: ctx.clock }, input);
      if (winner) return finish(ctx, ports, winner.id, undefined);
    }
    throw err;
  }
  return finish(ctx, ports, opened.id, opened.generation);
}

/** A payout recorded under the merchant's Idempotency-Key; the same key for another request is a 409. */
async function findByKey(ctx: UseCaseContext, input: CreatePayoutInput): Promise<PayoutRow | null> {
  if (input.idempotencyKey === undefined) return null;
  const row = await ctx.em.fork().findOne(Payout, { merchantId: input.merchantId, idempotencyKey: input.idempotencyKey });
  if (!row) return null;
  const same = row.destinationId === input.destinationId.toLowerCase() && equals(amount(row.amount), amount(input.amount));
  if (!same) throw conflict("IDEMPOTENCY_KEY_REUSED", "Idempotency-Key was already used for a different payout");
  return row;
}

/** Step 2 and 3 for the payout's DEBIT call (held: the lease its opener took); an order refund's reservation too. */
export async function finish(ctx: UseCaseContext, ports: PayoutPorts, payoutId: string, held: number | undefined): Promise<PayoutRow> {
  const em = ctx.em.fork();
  const callId = await debitCallIdOf(em, payoutId);
  const res = await runPayoutCall({ em, clock: ctx.clock }, ports, callId!, held);
  if (res.state === "in_progress") throw payoutInProgress();
  const { payout, merchantBalance } = res.result;
  if (payout.status === "OPENING") throw payoutInProgress();
  if (payout.status === "REFUSED") {
    throw merchantBalanceInsufficient(payout.asset, merchantBalance ?? "too low", formatAmount(add(amount(payout.amount), amount(payout.fee))));
  }
  return payout;
}
