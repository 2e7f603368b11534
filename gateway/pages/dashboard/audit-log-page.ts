import type { Router } from "@koa/router";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { recordOf } from "../../../services/platform/rpc/record-json.ts";
import type { AuditEntryRecord } from "../../../services/audit/contract.ts";
import { dashboardRoute, type DashboardDeps } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { actorTypeText } from "./words.ts";

const AUDIT_LOG_PATH = `${DASHBOARD}/audit-log`;
const PAGE_SIZE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The filters as typed (kept in the form and in the "older" link). */
interface Filters {
  actor: string;
  action: string;
  objectId: string;
  from: string;
  to: string;
}

const text = (value: unknown) => (typeof value === "string" ? value.trim().slice(0, 200) : "");

/** A YYYY-MM-DD day as the start of that day (UTC); `to` is inclusive, so its next day. Undefined if not a day. */
function dayStart(value: string, next = false): Date | undefined {
  if (!DATE.test(value)) return undefined;
  const at = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(at.getTime())) return undefined;
  return next ? new Date(at.getTime() + 86_400_000) : at;
}

/**
 * The audit log: every member may read who did what (VIEWER reads
 * everything). Filters by actor (id, email or key prefix), action, object id
 * and days (UTC), newest first, keyset paged with an "Older entries" link.
 * Reads through the same RPC as GET /api/v1/audit-log.
 */
export function auditLogPage(router: Router, deps: DashboardDeps): void {
  dashboardRoute(router, deps, AUDIT_LOG_PATH, {
    async get(ctx, signed) {
      const filters: Filters = {
        actor: text(ctx.query.actor),
        action: text(ctx.query.action),
        objectId: text(ctx.query.objectId),
        from: text(ctx.query.from),
        to: text(ctx.query.to),
      };
      const cursor = text(ctx.query.cursor) || undefined;
      const errors: string[] = [];
      const from = filters.from ? dayStart(filters.from) : undefined;
      const to = filters.to ? dayStart(filters.to, true) : undefined;
      if (filters.from && !from) errors.push("Enter the From date as a date, for example 2026-01-31.");
      if (filters.to && !to) errors.push("Enter the To date as a date, for example 2026-01-31.");
      if (from && to && from >= to) errors.push("The To date must be the same as or after the From date.");
      let entries: AuditEntryRecord[] = [];
      let nextCursor: string | undefined;
      if (errors.length === 0) {
        try {
          const res = await deps.clients.audit.listAuditEntries({
            merchantId: signed.member.merchantId,
            limit: PAGE_SIZE,
            cursor,
            actor: filters.actor || undefined,
            action: filters.action || undefined,
            objectId: filters.objectId || undefined,
            from: from ? timestampFromDate(from) : undefined,
            to: to ? timestampFromDate(to) : undefined,
          });
          entries = res.entries.map((e) => recordOf(e) as unknown as AuditEntryRecord);
          nextCursor = res.nextCursor;
        } catch (err) {
          // A stale or edited cursor: start again from the newest.
          if (!(err instanceof ConnectError && err.code === Code.InvalidArgument)) throw err;
          errors.push("This page of the log is no longer valid. Start again from the newest entries.");
        }
      }
      const query = (extra: Record<string, string>) => new URLSearchParams(Object.entries({ ...filters, ...extra }).filter(([, v]) => v !== "")).toString();
      deps.pages.page(ctx, errors.length ? 400 : 200, "dashboard/audit-log", {
        frame: signed.frame("Audit log", AUDIT_LOG_PATH),
        filters,
        errors,
        entries: entries.map((e) => ({
          ...e,
          atText: e.at.replace("T", " ").replace(/\.\d+Z$/, " UTC"),
          actorText: actorTypeText(e.actor.type),
          objectUrl: e.objectId ? `${AUDIT_LOG_PATH}?${new URLSearchParams({ objectId: e.objectId })}` : undefined,
        })),
        olderUrl: nextCursor ? `${AUDIT_LOG_PATH}?${query({ cursor: nextCursor })}` : undefined,
        newestUrl: cursor ? `${AUDIT_LOG_PATH}?${query({})}` : undefined,
      });
    },
  });
}
