import { LockMode } from "@mikro-orm/core";
import { RefundOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { runWalletCall, sweepWalletCalls, WALLET_CALL_TIMEOUT_MS, type WalletCall } from "../../platform/wallet-calls/wallet-call.ts";
import { ledgerKeys } from "../../wallet/contract.ts";
import { DomainError } from "../../platform/errors.ts";
import { add, amount, formatAmount } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";
import { chargeRecord } from "../subscription-record.ts";
import type { ChargePorts } from "../charges/charge-ports.ts";

/** What refunds need besides the database (SubscriptionPorts provides it). */
export type RefundPorts = Pick<ChargePorts, "wallet" | "logger">;
import { REFUND_ERRORS } from "./contract.ts";
import { SubscriptionRefund, type RefundRow } from "./refund-entities.ts";
import { refundRecord } from "./refund-record.ts";
import { refundMachine } from "./refund-status.ts";
import { chargeIdOfRefund } from "./refund-store.ts";
import { refundedSubscriptionVersion } from "../subscription-store.ts";

export const refundInProgress = () => new DomainError("failed_precondition", REFUND_ERRORS.inProgress, "this refund is being processed; try again in a moment");

export const merchantBalanceInsufficient = (asset: string, balance: string) =>
  new DomainError(
    "failed_precondition",
    REFUND_ERRORS.merchantBalanceInsufficient,
    `your ${asset} balance (${balance}) is below this refund; nothing was refunded`,
  );

/** The refunds' wallet-call table (platform/wallet-calls/). */
export const REFUNDS_TABLE = "subscription_refunds";

export type RefundSettlement =
  | { state: "in_progress" }
  | { state: "succeeded"; refund: RefundRow; charge: ChargeRow }
  | { state: "failed"; refund: RefundRow; merchantBalance: string | null };

interface RefundAnswer {
  outcome: RefundOutcome;
  transactionId: string | null;
  merchantBalanceAfter: string | null;
}

/**
 * The refund kind of wallet call (platform/wallet-calls/; create-refund.ts
 * did step 1, the PENDING row reserving its amount): the wallet moves the
 * money back under the key refund-<id> (a retry of that key moves nothing
 * again), then one transaction (lock order: the charge, then its refunds)
 * marks the row SUCCEEDED, adds it to the charge's refunded totals and
 * records subscription.charge_refunded. A merchant balance too low marks it
 * FAILED (the reservation ends, its Idempotency-Key is freed).
 */
function refundCall(ports: RefundPorts): WalletCall<RefundAnswer, ChargeRow, RefundSettlement, RefundRow> {
  return {
    table: REFUNDS_TABLE,
    what: "refund",
    logger: ports.logger,
    async call(ctx, id) {
      const refund = await ctx.em.fork().findOneOrFail(SubscriptionRefund, { id });
      const res = await ports.wallet.refund(
        {
          idempotencyKey: ledgerKeys.refund(refund.id),
          merchantId: refund.merchantId,
          walletUserId: refund.walletUserId,
          asset: refund.asset,
          amount: formatAmount(refund.assetAmount),
          description: `refund of subscription charge ${refund.chargeId}`,
        },
        { timeoutMs: WALLET_CALL_TIMEOUT_MS },
      );
      if (res.outcome !== RefundOutcome.SUCCEEDED && res.outcome !== RefundOutcome.MERCHANT_BALANCE_INSUFFICIENT) {
        throw new Error(`wallet answered refund ${id} with unknown outcome ${res.outcome}`);
      }
      return { outcome: res.outcome, transactionId: res.transactionId ?? null, merchantBalanceAfter: res.merchantBalanceAfter ?? null };
    },
    async lockBefore(em, id) {
      // Lock order: the charge, then its refunds (create-refund.ts takes the same).
      return em.findOneOrFail(SubscriptionCharge, { id: await chargeIdOfRefund(em, id) }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    },
    async lockRow(em, id) {
      return em.findOne(SubscriptionRefund, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    },
    async record(tx, row, answer, charge) {
      row.settledAt = tx.clock.now();
      row.leaseUntil = null;
      row.nextSettleAt = null;
      if (answer.outcome !== RefundOutcome.SUCCEEDED && row.owed) {
        // Money the service owes the customer (automatic-refund.ts), not a merchant's request: never given up; retried with back-off, then parked and reported.
        throw new Error(`merchant balance too low for owed refund ${row.id}; retried`);
      }
      if (answer.outcome !== RefundOutcome.SUCCEEDED) {
        row.status = refundMachine.next(row.status, "merchant_balance_too_low");
        row.failureReason = REFUND_ERRORS.merchantBalanceInsufficient;
        row.idempotencyKey = null;
        return { state: "failed", refund: row, merchantBalance: answer.merchantBalanceAfter };
      }
      row.status = refundMachine.next(row.status, "wallet_refunded");
      row.walletTransactionId = answer.transactionId;
      charge.amountRefunded = formatAmount(add(amount(charge.amountRefunded), amount(row.amount)));
      charge.assetAmountRefunded = formatAmount(add(amount(charge.assetAmountRefunded), amount(row.assetAmount)));
      // A refund does not change the subscription: its version as it stands (read, not locked: lock order is subscription first).
      const subscriptionVersion = await refundedSubscriptionVersion(tx.em, row.subscriptionId);
      recordEvent(tx.em, tx.clock, {
        merchantId: row.merchantId,
        type: "subscription.charge_refunded",
        data: { subscriptionId: row.subscriptionId, subscriptionVersion, charge: chargeRecord(charge), refund: refundRecord(row) },
      });
      return { state: "succeeded", refund: row, charge };
    },
    async settled(em, id) {
      return finished(em, await em.findOneOrFail(SubscriptionRefund, { id }, { refresh: true }));
    },
  };
}

/**
 * Steps 2 and 3 of a refund. `held`: the lease generation the caller already
 * holds (it just wrote the row); undefined takes the lease ("in_progress"
 * when another caller holds it). A failure leaves it PENDING with back-off:
 * the merchant's retry (same Idempotency-Key) or the sweep repeats the call
 * with the same wallet key.
 */
export async function settleRefund(ctx: UseCaseContext, ports: RefundPorts, refundId: string, held: number | undefined): Promise<RefundSettlement> {
  const res = await runWalletCall(ctx, refundCall(ports), refundId, held);
  return res.state === "settled" ? res.result : res;
}

async function finished(em: EntityManager, refund: RefundRow): Promise<RefundSettlement> {
  if (refund.status === "FAILED") return { state: "failed", refund, merchantBalance: null };
  const charge = await em.findOneOrFail(SubscriptionCharge, { id: refund.chargeId });
  return { state: "succeeded", refund, charge };
}

/** The sweep's part: refunds a crash or a failure left PENDING, finished with their own keys (with back-off, parked when they keep failing). */
export async function settleStaleRefunds(ctx: UseCaseContext, ports: RefundPorts): Promise<number> {
  return (await sweepWalletCalls(ctx, refundCall(ports))).settled;
}
