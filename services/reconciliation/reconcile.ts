import type { UseCaseContext } from "../platform/use-case.ts";
import type { Logger } from "../platform/logger.ts";
import { formatAmount } from "../platform/money.ts";
import type { AnomalyKind, OwnerType } from "./contract.ts";
import { comparedCounts, moneyOwnerMismatches, recordAnomalyOnce } from "./reconciliation-store.ts";

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
export async function reconcile(ctx: UseCaseContext, logger: Logger): Promise<Reconciliation> {
  const em = ctx.em;
  const counts = await comparedCounts(em);
  const rows = await moneyOwnerMismatches(em);
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
  return {
    status: anomalies.length ? "anomalies" : "ok",
    checked: Number(counts.transactions) + Number(counts.charges) + Number(counts.credits),
    anomalies,
    newlyRecorded,
    newKinds,
  };
}
