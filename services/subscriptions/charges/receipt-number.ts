import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { amount, isZero } from "../../platform/money.ts";
import type { ChargeRow } from "../entities.ts";

/**
 * Receipts (issue 25): every SUCCEEDED charge above 0 gets a number
 * `{prefix}-{000001}`, gap-free per merchant in commit order, and an
 * unguessable receipt URL.
 *
 * Gap-free in commit order: the number is taken inside the settling
 * transaction from the merchant's counter row (receipt_counters), whose
 * upsert holds the row's lock until that transaction ends. A second settle of
 * the same merchant waits for it: it reads the next number only after the
 * first committed (or, rolled back, it reuses the same number), so no number
 * is skipped or taken twice and numbers rise in commit order. The price is
 * that settles of one merchant serialise from the number to their commit.
 * The counter is the last lock a single settle takes (subscription, charge,
 * counter); a batch locks its merchants' counters in id order first
 * (lockReceiptCounters), so two batches never wait on each other in a cycle.
 */

/** The prefix a merchant's receipts get until the operator sets another (PATCH /admin/v1/merchants/{id}): R + its id's first 8 hex digits. */
export const defaultReceiptPrefix = (merchantId: string): string => `R${merchantId.replace(/-/g, "").slice(0, 8).toUpperCase()}`;

export const RECEIPT_DIGITS = 6;
export const formatReceiptNumber = (prefix: string, n: number | string): string => `${prefix}-${String(n).padStart(RECEIPT_DIGITS, "0")}`;

/** Numbers and links the receipt of a charge just marked SUCCEEDED; false (nothing done) for a zero charge or one already numbered. */
export async function assignReceipt(em: EntityManager, row: ChargeRow, publicBaseUrl: string): Promise<boolean> {
  if (row.status !== "SUCCEEDED" || row.receiptNumber || isZero(amount(row.amount))) return false;
  const [counter] = await em.execute<{ prefix: string; last_number: string }[]>(
    `insert into receipt_counters (merchant_id, prefix, last_number) values (?, ?, 1)
     on conflict (merchant_id) do update set last_number = receipt_counters.last_number + 1
     returning prefix, last_number::text`,
    [row.merchantId, defaultReceiptPrefix(row.merchantId)],
  );
  const token = randomBytes(24).toString("base64url");
  row.receiptNumber = formatReceiptNumber(counter!.prefix, counter!.last_number);
  row.receiptToken = token;
  row.receiptUrl = `${publicBaseUrl.replace(/\/+$/, "")}/receipts/${token}`;
  return true;
}

/** Locks (creating when missing) the counters of `merchantIds` in id order: a set settle takes them before numbering any receipt. */
export async function lockReceiptCounters(em: EntityManager, merchantIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(merchantIds)].sort();
  if (ids.length === 0) return;
  const list = ids.map(() => "?::uuid").join(", ");
  await em.execute(
    `insert into receipt_counters (merchant_id, prefix, last_number)
     select m, 'R' || upper(substr(replace(m::text, '-', ''), 1, 8)), 0 from (values ${ids.map(() => "(?::uuid)").join(", ")}) as v(m) order by m
     on conflict (merchant_id) do nothing`,
    ids,
  );
  await em.execute(`select 1 from receipt_counters where merchant_id in (${list}) order by merchant_id for update`, ids);
}
