import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * The one way times leave a service: ISO 8601 in UTC with milliseconds
 * ("2026-01-31T12:00:00.000Z") in records, protobuf Timestamps on the wire.
 * A missing time is null in a record and absent in a message. Dates hold
 * milliseconds, so a record's text and the message's Timestamp are the same
 * instant exactly.
 */
export const iso = (d: Date): string => d.toISOString();

export const isoOrNull = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** A record's time (ISO text) or a Date as a protobuf Timestamp. */
export const toTimestamp = (t: string | Date): Timestamp => timestampFromDate(typeof t === "string" ? new Date(t) : t);

export const toOptionalTimestamp = (t: string | Date | null | undefined): Timestamp | undefined => (t == null ? undefined : toTimestamp(t));

/** A Timestamp from the wire as the ISO text records use. */
export const isoFromTimestamp = (t: Timestamp): string => timestampDate(t).toISOString();

/**
 * The instants a time may be: what a protobuf Timestamp carries (0001-01-01T00:00:00Z
 * to 9999-12-31T23:59:59.999999999Z), which JavaScript dates and PostgreSQL
 * timestamptz hold too. Outside it a Date can still exist (year 0, 10000) but
 * PostgreSQL or the wire refuses it, so such input is refused where it enters.
 */
export const EARLIEST_INSTANT = "0001-01-01T00:00:00Z";
const LATEST_INSTANT = "9999-12-31T23:59:59.999999999Z";
const EARLIEST_SECONDS = -62_135_596_800n;
const LATEST_SECONDS = 253_402_300_799n;

/** Whether a time in milliseconds since 1970 is in that range. */
export const isStorableInstant = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= Number(EARLIEST_SECONDS) * 1000 && ms <= Number(LATEST_SECONDS) * 1000 + 999;

/** Why a Timestamp from the wire is not a storable instant, or undefined when it is. */
export function timestampProblem(t: Timestamp): string | undefined {
  if (t.nanos < 0 || t.nanos > 999_999_999) return `nanos must be 0 to 999999999 (got ${t.nanos})`;
  if (t.seconds < EARLIEST_SECONDS || t.seconds > LATEST_SECONDS) return `must be from ${EARLIEST_INSTANT} to ${LATEST_INSTANT}`;
  return undefined;
}
