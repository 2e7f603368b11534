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
