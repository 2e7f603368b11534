import { HttpError } from "../http-errors.ts";
import { EARLIEST_INSTANT, isStorableInstant } from "../../services/platform/timestamps.ts";

/**
 * The one reading of a date-time sent to the API (query or body): RFC 3339,
 * as ajv's `date-time` format takes it, narrowed to what the stack can hold.
 * ajv alone also takes a leap second (`23:59:60`, which no JavaScript Date
 * represents), an offset without minutes (`+05`, which Date does not parse)
 * and the year 0000 (which PostgreSQL refuses): each was a 500. So the
 * schemas' `date-time` format is this function (validation/ajv.ts) and
 * handlers turn the text into a Date with parseDateTime, never `new Date()`.
 */
export const DATE_TIME_RULE =
  `must be an RFC 3339 date-time like 2026-01-31T12:00:00Z (offset Z or ±hh:mm) from ${EARLIEST_INSTANT} to 9999-12-31T23:59:59Z; ` +
  "a leap second (:60) cannot be represented";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The instant `text` names, or undefined when it is not one the API takes. Fractions below a millisecond are dropped. */
export function readDateTime(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leapYear = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 && leapYear ? 29 : DAYS_IN_MONTH[month - 1];
  if (daysInMonth === undefined || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  const [offsetHours, offsetMinutes] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offsetMs = (m[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, Number((m[7] ?? "").slice(0, 3).padEnd(3, "0")));
  const ms = local.getTime() - offsetMs;
  return isStorableInstant(ms) ? new Date(ms) : undefined;
}

/** readDateTime for a request field: a 400 INVALID_REQUEST naming the field and the rule when it is not a date-time. */
export function parseDateTime(field: string, text: string): Date {
  const at = readDateTime(text);
  if (at) return at;
  const message = `${field}: ${DATE_TIME_RULE}`;
  throw new HttpError(400, "INVALID_REQUEST", message, [{ field, rule: "format", message }]);
}
