import { ConnectError } from "@connectrpc/connect";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { fromConnectError } from "../../http-errors.ts";
import type { Ctx } from "../page-http.ts";
import { problemText } from "./words.ts";

/**
 * What the object pages (API keys, webhooks, events, refunds, balance,
 * payouts) share: reading query filters, paging links, times, and a service's
 * refusal turned into a 4xx page instead of a 500.
 */

/** A query parameter as one trimmed string; absent or empty = undefined (the RPC's "no filter"). */
export function queryText(ctx: Ctx, name: string): string | undefined {
  const raw = ctx.query[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  const text = typeof first === "string" ? first.trim() : "";
  return text === "" ? undefined : text;
}

/** `path?filters&cursor=…`: the next page keeps the filters (keyset paging: one link forward, and back to the first). */
export function pageUrl(path: string, filters: Record<string, string | undefined>, cursor?: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v !== undefined) params.set(k, v);
  if (cursor) params.set("cursor", cursor);
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

/** Every time on these pages: "2026-11-27 13:40:35 UTC" (seconds matter in a delivery log). */
export function timeText(t: Timestamp | undefined): string {
  return t ? `${timestampDate(t).toISOString().slice(0, 19).replace("T", " ")} UTC` : "";
}

interface Problem {
  status: number;
  message: string;
  notFound: boolean;
}

/**
 * A service's verdict on what the member asked (a 4xx the API would answer)
 * as a sentence for the page; undefined for anything else (a broken call, a
 * bug), which the page guard turns into its 503/500 page.
 */
export function problemOf(err: unknown): Problem | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  const http = fromConnectError(err);
  if (http.status < 400 || http.status >= 500) return undefined;
  return { status: http.status, message: problemText(http.code, http.message), notFound: http.status === 404 };
}

/** A posted id or a query id: the service answers another merchant's (or a malformed) one as missing. */
export const formId = (value: string | undefined) => (value ?? "").trim();
