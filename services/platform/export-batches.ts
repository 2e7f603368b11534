import { invalid } from "./errors.ts";

/**
 * Exports read a period in keyset batches, oldest first: each batch is one
 * index range scan after the previous batch's last key, so a year of a large
 * merchant costs the same memory per batch as a day. The key travels as an
 * opaque token (base64url JSON of its parts).
 */
const EXPORT_BATCH_DEFAULT = 1000;
const EXPORT_BATCH_MAX = 5000;

export function exportBatchSize(limit: number | undefined): number {
  if (!limit || limit < 1) return EXPORT_BATCH_DEFAULT;
  return Math.min(limit, EXPORT_BATCH_MAX);
}

export function encodeExportKey(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/** The parts `encodeExportKey` wrote, each checked by its pattern; anything else is a 400, never a 500. */
export function decodeExportKey(token: string, patterns: RegExp[]): string[] {
  try {
    const parts = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(parts) || parts.length !== patterns.length) throw new Error("shape");
    parts.forEach((p, i) => {
      if (typeof p !== "string" || !patterns[i]!.test(p)) throw new Error("part");
    });
    return parts as string[];
  } catch {
    throw invalid("INVALID_REQUEST", "after: is not a key returned by this export");
  }
}

/** [from, to): both required, in order, at most 400 days apart (a year and a margin: one request, one file). */
export function exportPeriod(from: Date | undefined, to: Date | undefined): { from: Date; to: Date } {
  if (!from) throw invalid("INVALID_REQUEST", "from: is required");
  if (!to) throw invalid("INVALID_REQUEST", "to: is required");
  if (to <= from) throw invalid("INVALID_REQUEST", "to: must be after from");
  if (to.getTime() - from.getTime() > 400 * 86_400_000) throw invalid("INVALID_REQUEST", "to: the period may be at most 400 days");
  return { from, to };
}

/** An instant to the microsecond (PostgreSQL's precision), as the keys carry it. */
export const EXACT_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
