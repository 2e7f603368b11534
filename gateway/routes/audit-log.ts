import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { defineRoutes } from "../route.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { auditEntrySchema, listAuditLogQuery } from "../schemas/audit-log.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import { parseDateTime } from "../validation/date-time.ts";

export const auditLogRoutes = defineRoutes([
  {
    method: "get",
    path: "/api/v1/audit-log",
    operationId: "listAuditLog",
    summary: "List audit entries, newest first",
    description:
      "Who did what: every state-changing action on the merchant's objects, by a dashboard member, an API key, the operator or a customer " +
      "on a hosted page, and failed dashboard logins and codes. Keyset paged (`cursor` = `nextCursor`); for a SIEM, poll with `from` = the " +
      "last `at` you stored. Entries are never changed or deleted; they are kept RETENTION_AUDIT_ENTRIES_DAYS days (400 by default).",
    tag: "Audit log",
    auth: "apiKey",
    query: listAuditLogQuery,
    responses: { 200: { description: "A page of audit entries", schema: pageSchema(auditEntrySchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.audit.listAuditEntries({
        merchantId,
        limit: query.limit,
        cursor: query.cursor,
        actor: query.actor,
        action: query.action,
        objectId: query.objectId,
        from: query.from ? timestampFromDate(parseDateTime("from", query.from)) : undefined,
        to: query.to ? timestampFromDate(parseDateTime("to", query.to)) : undefined,
      });
      return { status: 200, body: toPageBody(res, res.entries.map(recordOf)) };
    },
  },
]);
