import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AuditService } from "../../proto/gen/billing/audit/v1/audit_pb.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import { listAuditEntries } from "./list-audit-entries.ts";
import { auditEntryRecord } from "./audit-entry-record.ts";

/** The audit log's one RPC: read it (writing is every service's transactions' business). */
export function auditService(): ServiceImpl<typeof AuditService> {
  return {
    async listAuditEntries(req, call) {
      const page = await listAuditEntries(useCaseContext(call), {
        merchantId: req.merchantId,
        limit: req.limit,
        cursor: req.cursor,
        actor: req.actor,
        action: req.action,
        objectId: req.objectId,
        from: req.from ? timestampDate(req.from) : undefined,
        to: req.to ? timestampDate(req.to) : undefined,
      });
      return {
        entries: page.items.map((row) => withRecordJson({ id: row.id, action: row.action, at: timestampFromDate(row.at) }, auditEntryRecord(row))),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },
  };
}
