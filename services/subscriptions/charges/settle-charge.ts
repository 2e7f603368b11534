import { LockMode } from "@mikro-orm/core";
import { performance } from "node:perf_hooks";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ChargeOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Clock } from "../../platform/clock.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { CHARGE_BATCH_MAX, ledgerKeys } from "../../wallet/contract.ts";
import { amount, formatAmount, isZero } from "../../platform/money.ts";
import {
  LEASE_SECONDS,
  renewLeases,
  runWalletCall,
  settleAnswer,
  sweepWalletCalls,
  WALLET_BATCH_CALL_TIMEOUT_MS,
  WALLET_CALL_TIMEOUT_MS,
  type CallOutcome,
  type WalletCall,
} from "../../platform/wallet-calls/wallet-call.ts";
import { collectEvents, recordEvent, writeCollectedEvents } from "../../events/record-event.ts";
import { Subscription, SubscriptionCharge, type AuthorizationRow, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { chargeRecord } from "../subscription-record.ts";
import { lockSubscription } from "../subscription-store.ts";
import { CHARGES_TABLE, type ChargePorts } from "./charge-ports.ts";
import { subscriptionIdOfCharge } from "./charge-store.ts";
import { chargeMachine } from "./charge-status.ts";
import { needsReceipt, numberReceipts, type ReceiptToNumber } from "./receipt-number.ts";

/**
 * Steps 2 and 3 of the wallet-call protocol (platform/wallet-calls/) for a
 * subscription charge (a first payment, a renewal or retry, a trial's first
 * charge, a plan change's immediate charge): the wallet charges the customer
 * under the key `subscription-charge-<id>`, then one transaction (lock order:
 * the subscription, then the charge) marks the row SUCCEEDED or FAILED and
 * hands the outcome to its purpose's handler (charge-ports.ts).
 */

type SettleResult = { state: "in_progress" } | { state: "settled"; charge: ChargeRow; subscription: SubscriptionRow };

/** What the wallet answered for a charge's key. */
export interface WalletAnswer {
  outcome: ChargeOutcome;
  transactionId: string | null;
}

type Settled = { charge: ChargeRow; subscription: SubscriptionRow };

/** The charge kind of wallet call. */
export function chargeCall(ports: ChargePorts): WalletCall<WalletAnswer, SubscriptionRow, Settled, ChargeRow> {
  return {
    table: CHARGES_TABLE,
    what: "charge",
    logger: ports.logger,
    async call(ctx, id) {
      return chargeWallet(ports, await ctx.em.fork().findOneOrFail(SubscriptionCharge, { id }));
    },
    async lockBefore(em, id) {
      // Lock order everywhere: subscription, then charge.
      return lockSubscription(em, (await subscriptionIdOfCharge(em, id))!);
    },
    async lockRow(em, id) {
      return em.findOne(SubscriptionCharge, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    },
    async record(tx, row, answer, sub) {
      // The settle's events are inserted once, after its receipt is numbered: flushed before the numbering (which
      // takes every other lock first) and completed after it, each would be written twice, its update probing every
      // month of the events under the merchant's receipt counter.
      collectEvents(tx.em);
      await recordAnswer(tx.em, tx.clock, ports, sub, row, answer);
      await writeCollectedEvents(tx.em);
      return { charge: row, subscription: sub };
    },
    async settled(em, id) {
      const charge = await em.findOneOrFail(SubscriptionCharge, { id }, { refresh: true });
      const subscription = await em.findOneOrFail(Subscription, { id: charge.subscriptionId });
      return { charge, subscription };
    },
  };
}

const asSettleResult = (res: CallOutcome<Settled>): SettleResult => (res.state === "settled" ? { state: "settled", ...res.result } : res);

/**
 * Steps 2 and 3 for a PENDING row. `held` is the lease generation the caller
 * already holds (it just opened the row: `charge.leaseGeneration`); with
 * false the lease is taken here and "in_progress" is answered when another
 * caller holds it.
 */
export async function settleCharge(ctx: UseCaseContext, ports: ChargePorts, chargeId: string, held: number | false): Promise<SettleResult> {
  return asSettleResult(await runWalletCall(ctx, chargeCall(ports), chargeId, held === false ? undefined : held));
}

/** Step 3 alone, for an answer the caller already has (fenced as every settle). */
export async function commitSettle(ctx: UseCaseContext, ports: ChargePorts, chargeId: string, generation: number, answer: WalletAnswer): Promise<SettleResult> {
  return asSettleResult(await settleAnswer(ctx, chargeCall(ports), chargeId, generation, answer));
}

/** The sweep's part: charges a crash or a failure left PENDING, finished with their own keys. */
export async function settleStaleCharges(ctx: UseCaseContext, ports: ChargePorts): Promise<number> {
  return (await sweepWalletCalls(ctx, chargeCall(ports))).settled;
}

/** Step 2: asks the wallet to move the money under the row's key. An RPC failure throws. */
export async function chargeWallet(ports: ChargePorts, charge: ChargeRow): Promise<WalletAnswer> {
  const request = walletCharge(charge);
  if (!request) return { outcome: ChargeOutcome.SUCCEEDED, transactionId: null };
  const res = await ports.wallet.charge({ ...request, merchantId: charge.merchantId }, { timeoutMs: WALLET_CALL_TIMEOUT_MS });
  return walletAnswer(charge, res);
}

/**
 * A set's first ChargeBatch called this soon after its leases were taken
 * calls without renewing them: they outlast the call (WALLET_BATCH_CALL_TIMEOUT_MS)
 * with 10 s left for the settle (a renewal just before the call left 15 s).
 * Renewing them anyway was one update of every row of the set, none of them
 * HOT (the rows just written fill their pages): 0.9 s of the database's 15 s
 * for 10,000 renewals (B8). Measured on this process's monotonic clock from
 * before the leases' database time began, so a process that stalled in
 * between renews as before. That clock stops while the machine is suspended
 * and database time does not: a host suspended longer than the lease in
 * between could call under a lease taken over, the case the protocol already
 * allows for a holder stalled after its renewal (wallet-call.ts, step 2): the
 * settle's fence keeps that answer from being recorded.
 */
const FRESH_LEASE_MS = LEASE_SECONDS * 1000 - WALLET_BATCH_CALL_TIMEOUT_MS - 10_000;

/**
 * Step 2 for many rows (the renewal batches): one ChargeBatch call per
 * merchant, each item exactly the Charge chargeWallet would make. Rows whose
 * lease was taken over before their chunk's call get no answer (their new
 * holder settles them). An RPC failure throws and leaves every row PENDING.
 * `leasesTakenAt` (performance.now() before the transaction that took the
 * leases began): a first call that soon after needs no renewal (FRESH_LEASE_MS).
 */
export async function chargeWalletBatch(
  em: EntityManager,
  ports: ChargePorts,
  charges: ChargeRow[],
  leasesTakenAt?: number,
): Promise<Map<string, WalletAnswer>> {
  const answers = new Map<string, WalletAnswer>();
  const leaseOf = (charge: ChargeRow) => ({ id: charge.id, generation: charge.leaseGeneration });
  /** Rows answered so far (or with nothing to move): the set settles them only after its last call, so each later renewal keeps them too. */
  const answered: { id: string; generation: number }[] = [];
  const byMerchant = new Map<string, { charge: ChargeRow; request: NonNullable<ReturnType<typeof walletCharge>> }[]>();
  for (const charge of charges) {
    const request = walletCharge(charge);
    if (!request) {
      answers.set(charge.id, { outcome: ChargeOutcome.SUCCEEDED, transactionId: null });
      answered.push(leaseOf(charge));
    } else byMerchant.set(charge.merchantId, [...(byMerchant.get(charge.merchantId) ?? []), { charge, request }]);
  }
  let calls = 0;
  for (const [merchantId, items] of byMerchant) {
    for (let i = 0; i < items.length; i += CHARGE_BATCH_MAX) {
      // Later chunks are called long after the leases were taken (each call may take up to its deadline): renewed
      // first, with the rows answered before; a row taken over meanwhile is left out (no answer). The first call,
      // made right after the leases were taken, has them whole.
      const pending = items.slice(i, i + CHARGE_BATCH_MAX);
      const fresh = calls++ === 0 && leasesTakenAt !== undefined && performance.now() - leasesTakenAt < FRESH_LEASE_MS;
      const held = fresh ? undefined : await renewLeases(em, CHARGES_TABLE, [...answered, ...pending.map((c) => leaseOf(c.charge))]);
      const chunk = held ? pending.filter((c) => held.has(c.charge.id)) : pending;
      if (chunk.length === 0) continue;
      const { results } = await ports.wallet.chargeBatch({ merchantId, charges: chunk.map((c) => c.request) }, { timeoutMs: WALLET_BATCH_CALL_TIMEOUT_MS });
      if (results.length !== chunk.length) throw new Error(`wallet answered ${results.length} of ${chunk.length} batched charges`);
      chunk.forEach((c, k) => {
        answers.set(c.charge.id, walletAnswer(c.charge, results[k]!));
        answered.push(leaseOf(c.charge));
      });
    }
  }
  return answers;
}

/** The wallet request of a charge row, or undefined when there is nothing to move (a zero amount succeeds as is). */
function walletCharge(charge: ChargeRow) {
  const assetAmount = charge.assetAmount == null ? undefined : formatAmount(charge.assetAmount);
  if (assetAmount === undefined || isZero(amount(assetAmount))) return undefined;
  return {
    idempotencyKey: ledgerKeys.subscriptionCharge(charge.id),
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

/**
 * Step 3's effect, on a row locked, still PENDING and still fenced to the
 * caller (a single settle, or a renewal batch's set-based settle): records
 * the outcome and hands it to the handler of what the charge pays for, with
 * its events. `authorization`: the subscription's current one when the
 * caller has read it already (events carry it); otherwise read when needed.
 * `receipts`: where a settle of many charges collects the receipts to number
 * with its last statement (numberReceipts); without it, the receipt is
 * numbered here, this settle's last statement.
 */
export async function recordAnswer(
  em: EntityManager,
  clock: Clock,
  ports: ChargePorts,
  sub: SubscriptionRow,
  row: ChargeRow,
  answer: WalletAnswer,
  authorization?: AuthorizationRow | null,
  receipts?: ReceiptToNumber[],
): Promise<void> {
  const now = clock.now();
  row.settledAt = now;
  row.leaseUntil = null;
  row.nextSettleAt = null;
  const handler = ports.chargeHandlers[row.purpose];
  if (answer.outcome !== ChargeOutcome.SUCCEEDED) {
    row.status = chargeMachine.next(row.status, "wallet_refused");
    row.failureReason = answer.outcome === ChargeOutcome.ACCOUNT_FROZEN ? "ACCOUNT_FROZEN" : "INSUFFICIENT_FUNDS";
    await handler.failed?.(em, clock, sub, row, authorization);
    return;
  }
  row.status = chargeMachine.next(row.status, "wallet_paid");
  row.walletTransactionId = answer.transactionId;
  // Recorded before what the charge pays for; names the version this commit leaves the subscription at (set below).
  const data = { subscriptionId: sub.id, subscriptionVersion: sub.version, charge: chargeRecord(row) };
  const event = recordEvent(em, clock, { merchantId: sub.merchantId, type: "subscription.charge_succeeded", data });
  await handler.succeeded(em, clock, sub, row, authorization);
  data.subscriptionVersion = sub.version;
  // The receipt number last: its counter row stays locked until the commit, so it is taken as late as possible (numberReceipts).
  if (!needsReceipt(row)) return;
  const receipt = { row, event, record: chargeRecord };
  if (receipts) receipts.push(receipt);
  else await numberReceipts(em, [receipt], ports.publicBaseUrl);
}
