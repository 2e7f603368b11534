/**
 * How a statement names rows of a partitioned table by key: `id = any(ids)`
 * and the partition key between the least and the greatest of the rows'
 * (`created_at between ? and ?`), not `created_at = any(keys)` too.
 *
 * Why: the primary key is (id, created_at). Given an array for each column,
 * the btree probes every pair, ids × keys: 250 events of one renewal batch
 * cost 62,500 probes (28 ms a statement, held under the merchant's receipt
 * counter). With a range on the second column, it probes once per id; and the
 * range, a constant when the statement is planned, still prunes the months
 * no row is in.
 *
 * The keys must be fixed-width UTC text, so that text order is time order: a
 * Date's toISOString(), or Postgres's `to_char(… at time zone 'UTC',
 * 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` (UTC_MICROS below), exact to the
 * microsecond.
 */
export function partitionKeyRange(keys: readonly string[]): [least: string, greatest: string] {
  if (keys.length === 0) throw new Error("partitionKeyRange: no keys");
  let least = keys[0]!;
  let greatest = least;
  for (const key of keys) {
    if (key.length !== least.length) throw new Error(`partitionKeyRange: ${key} is not of the fixed-width form`);
    if (key < least) least = key;
    if (key > greatest) greatest = key;
  }
  return [least, greatest];
}

/** A timestamptz column as fixed-width UTC text, exact to the microsecond (SQL, for `to_char`). */
export const UTC_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
