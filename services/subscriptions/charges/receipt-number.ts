import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { amount, isZero } from "../../platform/money.ts";
import type { ChargeRow } from "../entities.ts";
import { writeReceiptNumbers, type ReceiptToWrite } from "./receipt-store.ts";

/**
 * Receipts (issue 25): every SUCCEEDED charge above 0 gets a number
 * `{prefix}-{000001}`, gap-free per merchant in commit order, and an
 * unguessable receipt URL.
 *
 * Gap-free in commit order: the numbers are taken inside the settling
 * transaction from the merchant's counter row (receipt_counters), whose
 * upsert holds the row's lock until that transaction ends. A second settle of
 * the same merchant waits for it: it reads the next number only after the
 * first committed (or, rolled back, it reuses the same numbers), so no number
 * is skipped or taken twice and numbers rise in commit order. The price is
 * that settles of one merchant serialise from their numbering to their
 * commit, so a settle numbers its receipts last (numberReceipts): it flushes
 * everything else first, then one statement raises each merchant's counter
 * once for all the charges it settled (a renewal batch's hundreds included)
 * and writes the numbers into the charges and their events; the commit
 * follows. The counters are the last locks a settle takes (subscriptions,
 * charges, counters), taken in merchant id order by that one statement, so
 * two settles never wait on each other in a cycle.
 */

/** The prefix a merchant's receipts get until the operator sets another (PATCH /admin/v1/merchants/{id}): R + its id's first 8 hex digits. */
export const defaultReceiptPrefix = (merchantId: string): string => `R${merchantId.replace(/-/g, "").slice(0, 8).toUpperCase()}`;

const RECEIPT_DIGITS = 6;

/** A charge just marked SUCCEEDED whose receipt is to be numbered, and the event that carries it (subscription.charge_succeeded). */
export interface ReceiptToNumber {
  row: ChargeRow;
  /** The event entity, recorded in the same transaction, whose `data.charge` shows the receipt. */
  event: { id: string; createdAt: Date; data: Record<string, unknown> };
  /** Builds the event's `data.charge` from the numbered row (the charge's record). */
  record: (row: ChargeRow) => unknown;
}

/** True for a charge that gets a receipt and has none yet (SUCCEEDED, above zero). */
export const needsReceipt = (row: ChargeRow): boolean => row.status === "SUCCEEDED" && !row.receiptNumber && !isZero(amount(row.amount));

/**
 * Numbers and links the receipts of `charges` (those needsReceipt accepts),
 * in the order given, as the settle transaction's last statement: flushes
 * the unit of work of `em` (the transaction's own), then one statement
 * raises each merchant's counter by its count and writes each charge's
 * number, token and URL and its event's `data.charge.receiptNumber` and
 * `receiptUrl`. The entities get the same values and stay clean (no second
 * write at the commit). The counters stay locked only until the commit.
 */
export async function numberReceipts(em: EntityManager, charges: readonly ReceiptToNumber[], publicBaseUrl: string): Promise<void> {
  const due = charges.filter((c) => needsReceipt(c.row));
  if (due.length === 0) return;
  await em.flush();
  const base = `${publicBaseUrl.replace(/\/+$/, "")}/receipts/`;
  const ordinal = new Map<string, number>();
  const wanted: ReceiptToWrite[] = due.map((c) => {
    const ord = (ordinal.get(c.row.merchantId) ?? 0) + 1;
    ordinal.set(c.row.merchantId, ord);
    const prefix = defaultReceiptPrefix(c.row.merchantId);
    return {
      charge_id: c.row.id,
      event_id: c.event.id,
      event_created_at: c.event.createdAt.toISOString(),
      merchant_id: c.row.merchantId,
      prefix,
      ord,
      token: randomBytes(24).toString("base64url"),
    };
  });
  const rows = await writeReceiptNumbers(em, wanted, base, RECEIPT_DIGITS);
  // Every charge and event must have been written: anything else is a bug, and throwing rolls the settle back.
  if (rows.length !== due.length) throw new Error(`receipt numbering wrote ${rows.length} of ${due.length} charges and their events`);
  const numbers = new Map(rows.map((r) => [r.charge_id, r.receipt_number]));
  const uow = em.getUnitOfWork();
  wanted.forEach((w, i) => {
    const { row, event, record } = due[i]!;
    row.receiptNumber = numbers.get(w.charge_id)!;
    row.receiptToken = w.token;
    row.receiptUrl = base + w.token;
    (event.data as { charge?: unknown }).charge = record(row);
    // Written by the statement above: the entities' snapshots are taken again, so the commit's flush writes nothing.
    uow.merge(row);
    uow.merge(event);
  });
}
