import type { EntityManager } from "@mikro-orm/postgresql";
import { readByIndexesOnly } from "../../platform/database/index-only-reads.ts";
import { partitionKeyRange } from "../../platform/database/partition-key-range.ts";

/**
 * The statements of receipts: the merchants' counters (receipt_counters) and
 * the numbers they give charges and their events. Why the numbering is one
 * statement taken last in the settle: receipt-number.ts.
 */

/** One charge to number, as the numbering statement reads it (one JSON parameter for them all). */
export interface ReceiptToWrite {
  charge_id: string;
  event_id: string;
  /** The event's partition key, as its createdAt's toISOString() (fixed width: partitionKeyRange). */
  event_created_at: string;
  merchant_id: string;
  /** The merchant's default prefix: its counter's when this creates it. */
  prefix: string;
  /** 1, 2, … per merchant, in the order the charges are numbered. */
  ord: number;
  token: string;
}

/**
 * Raises each merchant's counter once by its count of `wanted` and writes
 * each charge's number (zero-padded to `digits`), token and URL (`urlBase` +
 * token), and its event's `data.charge.receiptNumber` and `receiptUrl`.
 * Returns the numbers given, or none when not every charge and event was
 * written.
 */
export async function writeReceiptNumbers(
  em: EntityManager,
  wanted: readonly ReceiptToWrite[],
  urlBase: string,
  digits: number,
): Promise<{ charge_id: string; receipt_number: string }[]> {
  // One parameter (the charges as JSON) whatever their number. The counters are raised in merchant id order:
  // the lock order of every settle. A charge's number: the counter before the raise + its ordinal in its merchant.
  // The charges and events are named by key (`= any`, the events' partition key as a range: partition-key-range.ts)
  // and read by index: the counters stay locked from here to the commit, so a scan here (up to 56 ms a statement on
  // a table with lagging statistics at 10,000 renewals) held every other settle of the merchant behind it.
  await readByIndexesOnly(em);
  const [least, greatest] = partitionKeyRange(wanted.map((w) => w.event_created_at));
  return em.execute<{ charge_id: string; receipt_number: string }[]>(
    `with wanted as (
       select * from jsonb_to_recordset(?::jsonb) as w(charge_id uuid, event_id uuid, event_created_at timestamptz, merchant_id uuid, prefix text, ord bigint, token text)
     ), counts as (
       select merchant_id, min(prefix) as prefix, count(*) as n from wanted group by merchant_id
     ), raised as (
       insert into receipt_counters (merchant_id, prefix, last_number)
       select merchant_id, prefix, n from counts order by merchant_id
       on conflict (merchant_id) do update set last_number = receipt_counters.last_number + excluded.last_number
       returning merchant_id, prefix, last_number
     ), numbered as (
       select w.charge_id, w.event_id, w.event_created_at, ? || w.token as url, w.token,
              r.prefix || '-' || lpad((r.last_number - c.n + w.ord)::text, greatest(${digits}, length((r.last_number - c.n + w.ord)::text)), '0') as receipt_number
         from wanted w join raised r using (merchant_id) join counts c using (merchant_id)
     ), charges as (
       update subscription_charges s set receipt_number = n.receipt_number, receipt_token = n.token, receipt_url = n.url
         from numbered n where s.id = n.charge_id and s.id = any(string_to_array(?, ',')::uuid[]) returning s.id
     ), events as (
       update events e set data = jsonb_set(jsonb_set(e.data, '{charge,receiptNumber}', to_jsonb(n.receipt_number)), '{charge,receiptUrl}', to_jsonb(n.url))
         -- With its month (events are partitioned by created_at): one partition probed, not every month's.
         from numbered n where e.id = n.event_id and e.created_at = n.event_created_at
          and e.id = any(string_to_array(?, ',')::uuid[]) and e.created_at between ?::timestamptz and ?::timestamptz returning e.id
     )
     select n.charge_id, n.receipt_number from numbered n
      where (select count(*) from charges) = ? and (select count(*) from events) = ?`,
    [
      JSON.stringify(wanted),
      urlBase,
      wanted.map((w) => w.charge_id).join(","),
      wanted.map((w) => w.event_id).join(","),
      least,
      greatest,
      wanted.length,
      wanted.length,
    ],
  );
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
