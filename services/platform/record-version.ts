/**
 * Record versions (migration 0020). Subscriptions, change sessions and
 * payment orders carry a `version` that every change raises by exactly one,
 * in the transaction that records the change's event, before the event is
 * recorded, so the event's data carries the new version. Webhooks may arrive
 * out of order (several requests in flight per endpoint): a receiver keeps
 * the highest version it holds and drops an event whose version is not newer.
 *
 * Columns outside the merchant-visible record (renewal claims, notice
 * bookkeeping, charge leases) are not changes and leave the version alone.
 */

/** A row of a versioned record, changed under its row lock. */
interface VersionedRow {
  updatedAt: Date;
  version: number;
}

/** The row changed at `now`: stamps updatedAt and raises the version by one. Call once per change, before recording its event. */
export function touch(row: VersionedRow, now: Date): void {
  row.updatedAt = now;
  row.version += 1;
}

/** The same for set-based SQL updates: `update … set …, ${BUMP_VERSION} … returning version`. */
export const BUMP_VERSION = "version = version + 1";
