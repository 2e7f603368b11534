import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { amount, isZero } from "../../platform/money.ts";
import type { ChargeRow } from "../entities.ts";
import { raiseReceiptCounters, type ReceiptCount } from "./receipt-store.ts";

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
 * its unit of work first (every other row lock it takes), then one statement
 * raises each merchant's counter once for all the charges it settled (a
 * renewal batch's hundreds included); what is written after it is only rows
 * the transaction already holds (its charges and subscriptions) or inserts
 * (its events), then the commit. The counters are the last locks a settle
 * waits for, in merchant id order, so two settles never wait on each other in
 * a cycle: the events inserted after them take only KEY SHARE locks (their
 * foreign keys) on the merchant and its subscriptions, which nothing holds
 * against them for long (no merchant row is locked FOR UPDATE; the one lock
 * on it, lockMerchantForEndpoints, is FOR NO KEY UPDATE) and a settle holds
 * its subscriptions already.
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
 * in the order given: flushes the unit of work of `em` (the transaction's
 * own), raises each merchant's counter by its count (receipt-store.ts), and
 * sets each charge's number, token and URL and its event's `data.charge`.
 * The caller writes them, each charge and event once, numbered: a single
 * settle its charge by the commit's flush and its collected events
 * (collectEvents) right after this; a renewal set its plain rows with its
 * own writes. Nothing but those writes may
 * follow before the commit: the counters stay locked until then.
 */
export async function numberReceipts(em: EntityManager, charges: readonly ReceiptToNumber[], publicBaseUrl: string): Promise<void> {
  await em.flush();
  const due = charges.filter((c) => needsReceipt(c.row));
  if (due.length === 0) return;
  const counts = new Map<string, ReceiptCount>();
  for (const { row } of due) {
    const count = counts.get(row.merchantId) ?? { merchant_id: row.merchantId, prefix: defaultReceiptPrefix(row.merchantId), n: 0 };
    count.n += 1;
    counts.set(row.merchantId, count);
  }
  const counters = await raiseReceiptCounters(em, [...counts.values()]);
  const base = `${publicBaseUrl.replace(/\/+$/, "")}/receipts/`;
  // A merchant's numbers: the n up to its counter after the raise, given in the order of `charges`.
  const next = new Map([...counts.values()].map((c) => [c.merchant_id, counterOf(counters, c.merchant_id).last - BigInt(c.n) + 1n]));
  for (const { row, event, record } of due) {
    const number = next.get(row.merchantId)!;
    next.set(row.merchantId, number + 1n);
    row.receiptNumber = `${counterOf(counters, row.merchantId).prefix}-${number.toString().padStart(RECEIPT_DIGITS, "0")}`;
    row.receiptToken = randomBytes(24).toString("base64url");
    row.receiptUrl = base + row.receiptToken;
    (event.data as { charge?: unknown }).charge = record(row);
  }
}

function counterOf(counters: Map<string, { prefix: string; last: bigint }>, merchantId: string) {
  const counter = counters.get(merchantId);
  // Every merchant counted must have its counter raised: anything else is a bug, and throwing rolls the settle back.
  if (!counter) throw new Error(`receipt numbering raised no counter for merchant ${merchantId}`);
  return counter;
}
