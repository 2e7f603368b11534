import { ChargeOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { amount, formatAmount, isZero } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, SubscriptionCharge, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { chargeRecord } from "../subscription-record.ts";
import { lockSubscription } from "../subscription-store.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { isRenewalCharge, renewalSettled } from "../renewals/renewal-outcome.ts";
import { applyPaidChange } from "../change-sessions/apply-paid-change.ts";
import { activateOnFirstPayment } from "../first-payment.ts";
import { takeLease, WALLET_CALL_TIMEOUT_MS } from "./lease.ts";

/** Steps 2 and 3 of the charge protocol (lease.ts): the idempotent wallet charge, then the fenced settle. */

export type SettleResult =
  | { state: "in_progress" }
  | { state: "settled"; charge: ChargeRow; subscription: SubscriptionRow };

/** What the wallet answered for a charge's key. */
export interface WalletAnswer {
  outcome: ChargeOutcome;
  transactionId: string | null;
}

/**
 * Steps 2 and 3 for a PENDING row. `held` is the lease generation the caller
 * already holds (it just opened the row: `charge.leaseGeneration`); with
 * false the lease is taken here and "in_progress" is answered when another
 * caller holds it.
 */
export async function settleCharge(ctx: UseCaseContext, ports: SubscriptionPorts, chargeId: string, held: number | false): Promise<SettleResult> {
  const generation = held === false ? await takeLease(ctx.em, chargeId) : held;
  if (generation === null) {
    const current = await ctx.em.fork().findOne(SubscriptionCharge, { id: chargeId });
    if (current && current.status !== "PENDING") return settledState(ctx, current);
    return { state: "in_progress" };
  }
  const charge = await ctx.em.fork().findOneOrFail(SubscriptionCharge, { id: chargeId });
  if (charge.status !== "PENDING") return settledState(ctx, charge);
  const answer = await chargeWallet(ports, charge);
  return commitSettle(ctx, ports, chargeId, generation, answer);
}

/** Step 2: asks the wallet to move the money under the row's key. An RPC failure leaves the row PENDING for the next settle. */
export async function chargeWallet(ports: SubscriptionPorts, charge: ChargeRow): Promise<WalletAnswer> {
  const assetAmount = charge.assetAmount == null ? undefined : formatAmount(charge.assetAmount);
  if (assetAmount === undefined || isZero(amount(assetAmount))) return { outcome: ChargeOutcome.SUCCEEDED, transactionId: null };
  const res = await ports.wallet.charge(
    {
      idempotencyKey: chargeKey(charge.id),
      walletUserId: charge.walletUserId,
      merchantId: charge.merchantId,
      asset: charge.asset,
      amount: assetAmount,
      description: `subscription ${charge.subscriptionId} period ${charge.periodIndex}`,
    },
    { timeoutMs: WALLET_CALL_TIMEOUT_MS },
  );
  if (res.outcome !== ChargeOutcome.SUCCEEDED && res.outcome !== ChargeOutcome.INSUFFICIENT_FUNDS && res.outcome !== ChargeOutcome.ACCOUNT_FROZEN) {
    throw new Error(`wallet answered charge ${charge.id} with unknown outcome ${res.outcome}`);
  }
  return { outcome: res.outcome, transactionId: res.transactionId ?? null };
}

/** The wallet's idempotency key of a subscription charge row (reconciliation matches ledger rows by it). */
export const chargeKey = (chargeId: string) => `subscription-charge-${chargeId}`;

/**
 * Step 3, fenced: records the wallet's answer only if the row is still
 * PENDING and still carries `generation` (nobody took the lease over since).
 */
export async function commitSettle(ctx: UseCaseContext, ports: SubscriptionPorts, chargeId: string, generation: number, answer: WalletAnswer): Promise<SettleResult> {
  const { outcome, transactionId } = answer;
  const result = await ctx.em.transactional(async (em) => {
    // Lock order everywhere: subscription, then charge.
    const chargeSubscription = await em.execute<{ subscription_id: string }[]>("select subscription_id from subscription_charges where id = ?", [chargeId]);
    const sub = await lockSubscription(em, chargeSubscription[0]!.subscription_id);
    const [locked] = await em.execute<{ lease_generation: number }[]>("select lease_generation from subscription_charges where id = ? for update", [chargeId]);
    const row = await em.findOneOrFail(SubscriptionCharge, { id: chargeId }, { refresh: true });
    const now = ctx.clock.now();
    if (row.status !== "PENDING") {
      if (outcome === ChargeOutcome.SUCCEEDED && row.status !== "SUCCEEDED") {
        // The fence makes this unreachable; reconciliation reports it if it ever happens.
        ports.logger.error({ chargeId, status: row.status }, "wallet charged a subscription charge already settled as failed");
      }
      return { state: "settled", charge: row, subscription: sub } as const;
    }
    if (Number(locked!.lease_generation) !== generation) {
      // Fenced off: a newer holder took the lease while this settle stalled; its outcome wins.
      ports.logger.warn({ chargeId, held: generation, current: Number(locked!.lease_generation) }, "charge settle fenced off: the lease was taken over");
      return { state: "in_progress" } as const;
    }
    row.settledAt = now;
    row.leaseUntil = null;
    row.nextSettleAt = null;
    if (outcome !== ChargeOutcome.SUCCEEDED) {
      row.status = "FAILED";
      row.failureReason = outcome === ChargeOutcome.ACCOUNT_FROZEN ? "ACCOUNT_FROZEN" : "INSUFFICIENT_FUNDS";
      if (isRenewalCharge(sub, row)) await renewalSettled(em, ctx.clock, ports.billing, sub, row);
      return { state: "settled", charge: row, subscription: sub } as const;
    }
    row.status = "SUCCEEDED";
    row.walletTransactionId = transactionId;
    recordEvent(em, ctx.clock, {
      merchantId: sub.merchantId,
      type: "subscription.charge_succeeded",
      data: { subscriptionId: sub.id, charge: chargeRecord(row) },
    });
    if (row.changeSessionId) {
      // A plan change's immediate charge: its success approves and applies the change.
      await applyPaidChange(em, ctx.clock, sub, row, ports.logger);
    } else if (sub.status === "PENDING_APPROVAL") {
      await activateOnFirstPayment(em, ctx.clock, sub, row, now);
    } else if (isRenewalCharge(sub, row)) {
      // A renewal, a trial's first charge or a retry (renewals/renew-subscription.ts).
      await renewalSettled(em, ctx.clock, ports.billing, sub, row);
    } else {
      // Cancel, pause, resume and expiry wait for a charge in flight, so this means a bug: reconciliation reports it.
      ports.logger.error({ chargeId, subscriptionId: sub.id, status: sub.status }, "a charge succeeded that no longer matches its subscription's billing");
    }
    return { state: "settled", charge: row, subscription: sub } as const;
  });
  return result;
}

async function settledState(ctx: UseCaseContext, charge: ChargeRow): Promise<SettleResult> {
  const sub = await ctx.em.fork().findOneOrFail(Subscription, { id: charge.subscriptionId });
  return { state: "settled", charge, subscription: sub };
}
