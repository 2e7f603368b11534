import type { UseCaseContext } from "../platform/use-case.ts";
import type { Logger } from "../platform/logger.ts";
import { formatAmount } from "../platform/money.ts";
import type { AnomalyKind, OwnerType } from "./contract.ts";
import { comparedCounts, moneyOwnerMismatches, recordAnomalyOnce, gatherTouchedRows } from "./reconciliation-store.ts";
import { finishRun, nextWindowStart, startRun, windowStart } from "./reconciliation-window-store.ts";

interface Anomaly {
  kind: AnomalyKind;
  ownerType: OwnerType;
  ownerId: string;
  walletTransactionId: string | null;
  /** Amounts as exact decimal strings, statuses, keys: what an operator needs to decide. */
  details: Record<string, string | number | null>;
}

interface Reconciliation {
  status: "ok" | "anomalies";
  /** Wallet transactions and owning rows compared. */
  checked: number;
  anomalies: Anomaly[];
  /** Of those, how many this run saw for the first time (recorded and logged at error). */
  newlyRecorded: number;
  /** The kinds of those first-seen anomalies (for the anomalies counter). */
  newKinds: string[];
  /** The first created_at this run checked (PostgreSQL's text); null: all history. */
  since: string | null;
}

export interface ReconcileOptions {
  /**
   * INCREMENTAL (what the endpoint and the job run every few minutes): what
   * changed since the last runs, every recorded anomaly and the small tables
   * (reconciliation-window-store.ts). FULL: all history, for the job's daily pass
   * and `billing reconcile --full`.
   */
  scope: "INCREMENTAL" | "FULL";
  /** RECONCILE_OVERLAP_MS. */
  overlapMs: number;
  /** Statement bound of a full pass (RECONCILE_FULL_TIMEOUT_MS); an incremental run keeps the connection's. */
  fullTimeoutMs?: number | undefined;
}

/**
 * Compares the money with the rows that should own it, both ways:
 *  - every wallet transaction made for a subscription charge (key
 *    `subscription-charge-<id>`: first payments, renewals, retries, plan-change
 *    charges) or an order credit (the credit row's own key) has a SUCCEEDED /
 *    DONE owner — else MONEY_WITHOUT_SUCCEEDED_OWNER;
 *  - every SUCCEEDED charge with a non-zero amount and every DONE credit has
 *    its wallet transaction — else SUCCEEDED_OWNER_WITHOUT_MONEY;
 *  - the two agree on asset and amount (numeric comparison in SQL, never JS
 *    numbers) — else AMOUNT_MISMATCH;
 *  - rows of any wallet call parked after repeated failures — PARKED_ROW —
 *    and PENDING rows no sweep finished well after their lease and back-off
 *    ran out — STALE_PENDING_ROW (platform/wallet-calls/wallet-call.ts);
 * Rows still in flight (PENDING, not parked) are not judged: their settle is
 * still to come. Each mismatch is recorded once (unique per kind and owner),
 * logged at error level when first seen, and counted.
 * Order refunds too: each order-refund-<id> reservation and
 * order-refund-return-<id> against its refund and payout, both ways.
 * Payouts the same way: each payout-debit-<id> / payout-reversal-<id>
 * transaction against its payout (amount + fee; a reversal only for a
 * FAILED or CANCELLED one), the PAYOUTS account against what payouts took and
 * did not give back, and PAYOUT_PAID_TWICE (two payout.paid events for one
 * payout, or two payouts on one chain transfer).
 * And every SUCCEEDED period charge (not a plan change's) whose subscription
 * never billed its period (the period index did not move past it): money
 * taken for nothing — CHARGE_WITHOUT_BILLED_PERIOD.
 */
export async function reconcile(ctx: UseCaseContext, logger: Logger, options: ReconcileOptions): Promise<Reconciliation> {
  const em = ctx.em;
  await ctx.clock.sync();
  const since = options.scope === "FULL" ? null : await windowStart(em);
  // The offset the service clock adds to real time (the sandbox's; zero otherwise): the run's service time is
  // database time plus this, so an operator's host clock cannot move the windows.
  const runId = await startRun(em, since === null ? "FULL" : "INCREMENTAL", since, ctx.clock.now().getTime() - Date.now());
  const { counts, rows, nextSince } = await em.transactional(
    async (tx) => {
      // A full pass reads all history: its own bound, local to this transaction (a pooler's connection keeps none of it).
      if (since === null && options.fullTimeoutMs !== undefined) await tx.execute(`set local statement_timeout = ${Math.trunc(options.fullTimeoutMs)}`);
      // One snapshot for every statement (repeatable read), taken by the first: where the next run may start is read
      // in the snapshot the checks judge. Not read-only: an audited call (WalletService/Reconcile) records its audit
      // entry as the first transaction commits.
      const nextSince = await nextWindowStart(tx, options.overlapMs);
      const touched = since === null ? null : await gatherTouchedRows(tx, since);
      return { nextSince, counts: await comparedCounts(tx, touched), rows: await moneyOwnerMismatches(tx, touched) };
    },
    { isolationLevel: "repeatable read" },
  );
  const anomalies: Anomaly[] = rows.map((r) => ({
    kind: r.kind,
    ownerType: r.owner_type,
    ownerId: r.owner_id,
    walletTransactionId: r.wallet_transaction_id,
    details: {
      ownerStatus: r.owner_status,
      ownerAsset: r.owner_asset,
      ownerAmount: r.owner_amount == null ? null : formatAmount(r.owner_amount),
      walletAsset: r.money_asset,
      walletAmount: r.money_amount == null ? null : formatAmount(r.money_amount),
    },
  }));

  let newlyRecorded = 0;
  const newKinds: string[] = [];
  const now = ctx.clock.now();
  for (const a of anomalies) {
    if (await recordAnomalyOnce(em, a, now)) {
      newlyRecorded += 1;
      newKinds.push(a.kind);
      logger.error({ anomaly: a }, "reconciliation anomaly: money and its owner disagree");
    }
  }
  if (newlyRecorded) logger.error({ newlyRecorded, total: anomalies.length }, "reconciliation found new anomalies");
  const checked = Number(counts.transactions) + Number(counts.charges) + Number(counts.credits);
  await finishRun(em, runId, { nextSince, checked, anomalies: anomalies.length });
  return {
    status: anomalies.length ? "anomalies" : "ok",
    checked,
    anomalies,
    newlyRecorded,
    newKinds,
    since,
  };
}
