import { randomUUID } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { add, amount, formatAmount } from "../platform/money.ts";
import { runWalletCall, sweepWalletCalls, type CallOutcome, type WalletCall } from "../platform/wallet-calls/wallet-call.ts";
import { ledgerKeys } from "../wallet/contract.ts";
import { recordEvent } from "../events/record-event.ts";
import { DomainError } from "../platform/errors.ts";
import { PAYOUT_ERRORS } from "./contract.ts";
import { Payout, PayoutCall, type PayoutCallKind, type PayoutCallRow, type PayoutRow } from "./entities.ts";
import type { ChainStatus, ChainTransfer, PayoutAsset, PayoutPorts } from "./payout-ports.ts";
import { payoutRecord } from "./payout-records.ts";
import { payoutMachine } from "./payout-status.ts";
import { followPayout } from "./order-refunds/follow-payout.ts";
import { PAYOUT_CALLS_TABLE, payoutIdOfCall } from "./payout-store.ts";

type Answer =
  | { kind: "DEBIT"; outcome: "SUCCEEDED" | "MERCHANT_BALANCE_INSUFFICIENT"; transactionId: string | null; merchantBalanceAfter: string }
  | { kind: "SUBMIT"; status: ChainStatus }
  | { kind: "REVERSAL"; transactionId: string };

interface CallResult {
  payout: PayoutRow;
  call: PayoutCallRow;
  /** Only for a DEBIT refused now: the balance the wallet saw. */
  merchantBalance?: string | undefined;
}

export const payoutsUnavailable = () =>
  new DomainError("unavailable", PAYOUT_ERRORS.payoutsUnavailable, "payouts are not available on this deployment (no custody signer is configured)");

/** The registry entry of a payout's asset (the wallet's, cached by the port). */
export async function assetOf(ports: Pick<PayoutPorts, "wallet">, code: string): Promise<PayoutAsset> {
  const asset = (await ports.wallet.listAssets()).find((a) => a.code === code);
  if (!asset) throw new Error(`asset ${code} is no longer in the wallet's registry`);
  return asset;
}

export const transferOf = (payout: PayoutRow, asset: PayoutAsset): ChainTransfer => ({
  payoutId: payout.id,
  network: payout.network,
  asset: payout.asset,
  // Only a payout with an address is ever handed to the chain (the SUBMIT call is opened once it has one).
  address: payout.address ?? "",
  amount: formatAmount(payout.amount),
  requiredConfirmations: asset.requiredConfirmations,
  blockSeconds: asset.blockSeconds,
});

/**
 * The payout kind of wallet call (platform/wallet-calls/wallet-call.ts): each
 * payout_calls row is one call: DEBIT (wallet, key payout-debit-<payout>),
 * SUBMIT (the chain, keyed by the payout id), REVERSAL (wallet, key
 * payout-reversal-<payout>). Lock order: the payout, then its call. What
 * each answer changes is recorded in one transaction with its event.
 */
function payoutCall(ports: PayoutPorts): WalletCall<Answer, PayoutRow, CallResult, PayoutCallRow> {
  return {
    table: PAYOUT_CALLS_TABLE,
    what: "payout call",
    logger: ports.logger,
    async call(ctx, id): Promise<Answer> {
      const em = ctx.em.fork();
      const call = await em.findOneOrFail(PayoutCall, { id });
      const payout = await em.findOneOrFail(Payout, { id: call.payoutId });
      const description = (
        payout.source === "ORDER_REFUND" ? `order refund ${payout.sourceId} (payout ${payout.id})` : `payout ${payout.id} to ${payout.address}`
      ).slice(0, 500);
      if (call.kind === "DEBIT") {
        const res = await ports.wallet.debit({
          idempotencyKey: debitKeyOf(payout),
          merchantId: payout.merchantId,
          asset: call.asset,
          amount: formatAmount(call.amount),
          description,
        });
        return { kind: "DEBIT", ...res };
      }
      if (call.kind === "REVERSAL") {
        const res = await ports.wallet.reverse({
          idempotencyKey: reversalKeyOf(payout),
          merchantId: payout.merchantId,
          asset: call.asset,
          amount: formatAmount(call.amount),
          description: `reversal of ${description}`.slice(0, 500),
        });
        return { kind: "REVERSAL", transactionId: res.transactionId };
      }
      if (!ports.chain) throw payoutsUnavailable();
      const status = await ports.chain.submit(ctx, transferOf(payout, await assetOf(ports, payout.asset)));
      return { kind: "SUBMIT", status };
    },
    async lockBefore(em, id) {
      const payoutId = await payoutIdOfCall(em, id);
      return em.findOneOrFail(Payout, { id: payoutId! }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    },
    async lockRow(em, id) {
      return em.findOne(PayoutCall, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    },
    async record(tx, call, answer, payout) {
      const now = tx.clock.now();
      call.settledAt = now;
      call.leaseUntil = null;
      call.nextSettleAt = null;
      payout.updatedAt = now;
      if (answer.kind === "DEBIT") {
        if (answer.outcome !== "SUCCEEDED") {
          call.status = "REFUSED";
          payout.status = payoutMachine.next(payout.status, "balance_too_low");
          payout.idempotencyKey = null;
          await followPayout(tx.em, tx.clock, ports.claimLinks, payout, "balance_too_low");
          return { payout, call, merchantBalance: answer.merchantBalanceAfter };
        }
        call.status = "DONE";
        call.walletTransactionId = answer.transactionId;
        payout.debitedAt = now;
        const awaiting = payout.address === null;
        payout.status = payoutMachine.next(payout.status, awaiting ? "debited_awaiting_address" : payout.reviewRequired ? "debited_for_review" : "debited");
        if (payout.status === "PENDING") openCall(tx.em, now, payout, "SUBMIT");
        // A payout waiting for the customer's address is not a payout the merchant can read yet: the order refund tells.
        if (!awaiting) recordEvent(tx.em, tx.clock, { merchantId: payout.merchantId, type: "payout.created", data: payoutRecord(payout) });
        await followPayout(tx.em, tx.clock, ports.claimLinks, payout, awaiting ? "reserved_awaiting_address" : "reserved_with_address");
        return { payout, call };
      }
      if (answer.kind === "REVERSAL") {
        call.status = "DONE";
        call.walletTransactionId = answer.transactionId;
        payout.reversedAt = now;
        return { payout, call };
      }
      // SUBMIT: the chain has (or refused) the transfer; the payout must follow it whatever else happened meanwhile.
      call.status = "DONE";
      call.txHash = answer.status.txHash;
      if (answer.status.state === "FAILED") {
        await failPayout(tx.em, tx.clock, ports, payout, "chain_failed", answer.status.failureReason ?? "the chain refused the transfer");
        return { payout, call };
      }
      markProcessing(tx.em, tx.clock, payout, answer.status.txHash ?? "");
      return { payout, call };
    },
    async settled(em, id) {
      const call = await em.findOneOrFail(PayoutCall, { id }, { refresh: true });
      return { call, payout: await em.findOneOrFail(Payout, { id: call.payoutId }, { refresh: true }) };
    },
  };
}

/** PENDING/IN_REVIEW → PROCESSING with its txHash (payout.processing). */
function markProcessing(em: EntityManager, clock: Clock, payout: PayoutRow, txHash: string): void {
  const now = clock.now();
  payout.status = payoutMachine.next(payout.status, "submitted");
  payout.txHash = txHash;
  payout.submittedAt = now;
  payout.nextChainCheckAt = now;
  payout.updatedAt = now;
  recordEvent(em, clock, { merchantId: payout.merchantId, type: "payout.processing", data: payoutRecord(payout) });
}

/**
 * → FAILED (chain failure or rejection) or CANCELLED, under the payout's
 * lock: the reason is recorded, the event written, and the REVERSAL call
 * opened in the same transaction, so the money's way back is as durable as
 * the failure (the caller or the sweep carries it to the wallet).
 */
export async function failPayout(
  em: EntityManager,
  clock: Clock,
  ports: Pick<PayoutPorts, "claimLinks">,
  payout: PayoutRow,
  event: "chain_failed" | "rejected" | "cancelled" | "claim_expired",
  reason: string | null,
): Promise<PayoutCallRow> {
  const now = clock.now();
  payout.status = payoutMachine.next(payout.status, event);
  payout.updatedAt = now;
  if (event === "cancelled") payout.cancelledAt = now;
  else if (event !== "claim_expired") {
    payout.failedAt = now;
    payout.failureReason = (reason ?? "failed").slice(0, 500);
  }
  // An expired claim's payout was never visible: only the order refund's event tells.
  if (event !== "claim_expired")
    recordEvent(em, clock, { merchantId: payout.merchantId, type: event === "cancelled" ? "payout.cancelled" : "payout.failed", data: payoutRecord(payout) });
  await followPayout(em, clock, ports.claimLinks, payout, event === "claim_expired" ? "claim_expired" : "payout_failed");
  return openCall(em, now, payout, "REVERSAL");
}

/** The ledger key of a payout's debit: an order refund's reservation is named after the refund (ledger kind ORDER_REFUND). */
const debitKeyOf = (payout: PayoutRow): string =>
  payout.source === "ORDER_REFUND" && payout.sourceId ? ledgerKeys.orderRefund(payout.sourceId) : ledgerKeys.payoutDebit(payout.id);

/** The ledger key of the money back (FAILED, CANCELLED, or an expired claim). */
const reversalKeyOf = (payout: PayoutRow): string =>
  payout.source === "ORDER_REFUND" && payout.sourceId ? ledgerKeys.orderRefundReturn(payout.sourceId) : ledgerKeys.payoutReversal(payout.id);

/** A new call row of the payout, PENDING and not leased: the caller's runWalletCall or the sweep takes it. */
export function openCall(em: EntityManager, now: Date, payout: PayoutRow, kind: PayoutCallKind): PayoutCallRow {
  return em.create(PayoutCall, {
    id: randomUUID(),
    payoutId: payout.id,
    kind,
    status: "PENDING",
    walletTransactionId: null,
    txHash: null,
    amount: kind === "SUBMIT" ? formatAmount(payout.amount) : formatAmount(add(amount(payout.amount), amount(payout.fee))),
    asset: payout.asset,
    leaseUntil: null,
    leaseGeneration: 0,
    settleFailures: 0,
    nextSettleAt: null,
    parkedAt: null,
    lastError: null,
    createdAt: now,
    settledAt: null,
  });
}

/** The call of `kind` of a payout, if opened. */
export async function callOf(em: EntityManager, payoutId: string, kind: PayoutCallKind): Promise<PayoutCallRow | null> {
  return em.findOne(PayoutCall, { payoutId, kind }, { refresh: true });
}

/**
 * Runs one call (steps 2 and 3 of the protocol). Failures count on the row
 * and surface as SERVICE_UNAVAILABLE; the sweep finishes the row.
 */
export async function runPayoutCall(ctx: UseCaseContext, ports: PayoutPorts, callId: string, held?: number): Promise<CallOutcome<CallResult>> {
  return runWalletCall(ctx, payoutCall(ports), callId, held);
}

/** Runs a call that may fail for now (the money's way back): the sweep finishes it; the caller answers what committed. */
export async function tryPayoutCall(ctx: UseCaseContext, ports: PayoutPorts, callId: string): Promise<void> {
  try {
    await runPayoutCall(ctx, ports, callId);
  } catch (err) {
    ports.logger.warn({ err, callId }, "payout call failed; the payouts sweep finishes it");
  }
}

/** The sweep's part: calls a crash, a lost job or a failure left PENDING, with their own keys. */
export async function sweepPayoutCalls(ctx: UseCaseContext, ports: PayoutPorts): Promise<{ settled: number; failed: number }> {
  return sweepWalletCalls(ctx, payoutCall(ports));
}
