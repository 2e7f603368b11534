import type { EntityManager } from "@mikro-orm/postgresql";
import { ChargeOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Clock } from "../../platform/clock.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { CHARGE_BATCH_MAX } from "../../wallet/contract.ts";
import { amount, formatAmount, isZero } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, SubscriptionCharge, type AuthorizationRow, type ChargeRow, type SubscriptionRow } from "../entities.ts";
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
  const request = walletCharge(charge);
  if (!request) return { outcome: ChargeOutcome.SUCCEEDED, transactionId: null };
  const res = await ports.wallet.charge({ ...request, merchantId: charge.merchantId }, { timeoutMs: WALLET_CALL_TIMEOUT_MS });
  return walletAnswer(charge, res);
}

/**
 * Step 2 for many rows (the renewal batches): one ChargeBatch call per
 * merchant, each item exactly the Charge chargeWallet would make. An RPC
 * failure throws and leaves every row PENDING for the next settle.
 */
export async function chargeWalletBatch(ports: SubscriptionPorts, charges: ChargeRow[]): Promise<Map<string, WalletAnswer>> {
  const answers = new Map<string, WalletAnswer>();
  const byMerchant = new Map<string, { charge: ChargeRow; request: NonNullable<ReturnType<typeof walletCharge>> }[]>();
  for (const charge of charges) {
    const request = walletCharge(charge);
    if (!request) answers.set(charge.id, { outcome: ChargeOutcome.SUCCEEDED, transactionId: null });
    else byMerchant.set(charge.merchantId, [...(byMerchant.get(charge.merchantId) ?? []), { charge, request }]);
  }
  for (const [merchantId, items] of byMerchant) {
    for (let i = 0; i < items.length; i += CHARGE_BATCH_MAX) {
      const chunk = items.slice(i, i + CHARGE_BATCH_MAX);
      const { results } = await ports.wallet.chargeBatch({ merchantId, charges: chunk.map((c) => c.request) }, { timeoutMs: WALLET_CALL_TIMEOUT_MS });
      if (results.length !== chunk.length) throw new Error(`wallet answered ${results.length} of ${chunk.length} batched charges`);
      chunk.forEach((c, k) => answers.set(c.charge.id, walletAnswer(c.charge, results[k]!)));
    }
  }
  return answers;
}

/** The wallet request of a charge row, or undefined when there is nothing to move (a zero amount succeeds as is). */
function walletCharge(charge: ChargeRow) {
  const assetAmount = charge.assetAmount == null ? undefined : formatAmount(charge.assetAmount);
  if (assetAmount === undefined || isZero(amount(assetAmount))) return undefined;
  return {
    idempotencyKey: chargeKey(charge.id),
    walletUserId: charge.walletUserId,
    asset: charge.asset,
    amount: assetAmount,
    description: `subscription ${charge.subscriptionId} period ${charge.periodIndex}`,
  };
}

function walletAnswer(charge: ChargeRow, res: { outcome: ChargeOutcome; transactionId?: string | undefined }): WalletAnswer {
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
  const { outcome } = answer;
  const result = await ctx.em.transactional(async (em) => {
    // Lock order everywhere: subscription, then charge.
    const chargeSubscription = await em.execute<{ subscription_id: string }[]>("select subscription_id from subscription_charges where id = ?", [chargeId]);
    const sub = await lockSubscription(em, chargeSubscription[0]!.subscription_id);
    const [locked] = await em.execute<{ lease_generation: number }[]>("select lease_generation from subscription_charges where id = ? for update", [chargeId]);
    const row = await em.findOneOrFail(SubscriptionCharge, { id: chargeId }, { refresh: true });
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
    await recordAnswer(em, ctx.clock, ports, sub, row, answer);
    return { state: "settled", charge: row, subscription: sub } as const;
  });
  return result;
}

/**
 * Step 3's effect, on a row locked, still PENDING and still fenced to the
 * caller (commitSettle, or a renewal batch's set-based settle): records the
 * outcome and hands it to what the charge pays for, with its events.
 * `authorization`: the subscription's current one when the caller has read
 * it already (events carry it); otherwise it is read when needed.
 */
export async function recordAnswer(
  em: EntityManager,
  clock: Clock,
  ports: SubscriptionPorts,
  sub: SubscriptionRow,
  row: ChargeRow,
  answer: WalletAnswer,
  authorization?: AuthorizationRow | null,
): Promise<void> {
  const now = clock.now();
  row.settledAt = now;
  row.leaseUntil = null;
  row.nextSettleAt = null;
  if (answer.outcome !== ChargeOutcome.SUCCEEDED) {
    row.status = "FAILED";
    row.failureReason = answer.outcome === ChargeOutcome.ACCOUNT_FROZEN ? "ACCOUNT_FROZEN" : "INSUFFICIENT_FUNDS";
    if (isRenewalCharge(sub, row)) await renewalSettled(em, clock, ports.billing, sub, row, authorization);
    return;
  }
  row.status = "SUCCEEDED";
  row.walletTransactionId = answer.transactionId;
  // Recorded before what the charge pays for; names the version this commit leaves the subscription at (set below).
  const data = { subscriptionId: sub.id, subscriptionVersion: sub.version, charge: chargeRecord(row) };
  recordEvent(em, clock, { merchantId: sub.merchantId, type: "subscription.charge_succeeded", data });
  if (row.changeSessionId) {
    // A plan change's immediate charge: its success approves and applies the change.
    await applyPaidChange(em, clock, sub, row, ports.logger);
  } else if (sub.status === "PENDING_APPROVAL") {
    await activateOnFirstPayment(em, clock, sub, row, now);
  } else if (isRenewalCharge(sub, row)) {
    // A renewal, a trial's first charge or a retry (renewals/renew-subscription.ts).
    await renewalSettled(em, clock, ports.billing, sub, row, authorization);
  } else {
    // Cancel, pause, resume and expiry wait for a charge in flight, so this means a bug: reconciliation reports it.
    ports.logger.error({ chargeId: row.id, subscriptionId: sub.id, status: sub.status }, "a charge succeeded that no longer matches its subscription's billing");
  }
  data.subscriptionVersion = sub.version;
}

async function settledState(ctx: UseCaseContext, charge: ChargeRow): Promise<SettleResult> {
  const sub = await ctx.em.fork().findOneOrFail(Subscription, { id: charge.subscriptionId });
  return { state: "settled", charge, subscription: sub };
}
