import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * The statements of receipts: the merchants' counters (receipt_counters).
 * Why the counters are raised last in a settle: receipt-number.ts.
 */

/** A merchant's count of receipts to number in one settle. */
export interface ReceiptCount {
  merchant_id: string;
  /** The merchant's default prefix: its counter's when this creates it. */
  prefix: string;
  n: number;
}

/**
 * Raises each merchant's counter once by its count, in merchant id order
 * (the lock order of every settle), creating it at 0 with the default prefix
 * when the merchant has none. Returns each counter's prefix and last number
 * after the raise: the settle's numbers are the n before it, included. The
 * counters stay locked until the transaction ends.
 */
export async function raiseReceiptCounters(em: EntityManager, counts: readonly ReceiptCount[]): Promise<Map<string, { prefix: string; last: bigint }>> {
  // One parameter (the counts as JSON) whatever their number.
  const rows = await em.execute<{ merchant_id: string; prefix: string; last_number: string }[]>(
    `insert into receipt_counters (merchant_id, prefix, last_number)
     select merchant_id, prefix, n from jsonb_to_recordset(?::jsonb) as c(merchant_id uuid, prefix text, n bigint) order by merchant_id
     on conflict (merchant_id) do update set last_number = receipt_counters.last_number + excluded.last_number
     returning merchant_id, prefix, last_number::text`,
    [JSON.stringify(counts)],
  );
  return new Map(rows.map((r) => [r.merchant_id, { prefix: r.prefix, last: BigInt(r.last_number) }]));
}

/**
 * The merchant's counter, locked until the transaction ends (made first, at
 * 0 with `defaultPrefix`, when the merchant has none yet).
 */
export async function lockReceiptCounter(em: EntityManager, merchantId: string, defaultPrefix: string): Promise<{ prefix: string; lastNumber: string }> {
  await em.execute("insert into receipt_counters (merchant_id, prefix, last_number) values (?, ?, 0) on conflict (merchant_id) do nothing", [
    merchantId,
    defaultPrefix,
  ]);
  const [row] = await em.execute<{ prefix: string; last_number: string }[]>(
    "select prefix, last_number::text from receipt_counters where merchant_id = ? for update",
    [merchantId],
  );
  return { prefix: row!.prefix, lastNumber: row!.last_number };
}

/** The prefix of the merchant's next receipts (its counter locked by lockReceiptCounter). */
export async function setReceiptCounterPrefix(em: EntityManager, merchantId: string, prefix: string): Promise<void> {
  await em.execute("update receipt_counters set prefix = ? where merchant_id = ?", [prefix, merchantId]);
}
