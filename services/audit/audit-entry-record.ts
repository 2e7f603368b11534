import type { AuditEntryRecord } from "./contract.ts";

/** A row of audit_entries as the database returns it. */
export interface AuditEntryRow {
  id: string;
  at: Date;
  actor_type: string;
  actor_id: string;
  actor_label: string;
  action: string;
  object_type: string;
  object_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

/** The merchant-facing record (REST body, page rows, SIEM feed): built once, here. */
export function auditEntryRecord(row: AuditEntryRow): AuditEntryRecord {
  return {
    id: row.id,
    object: "audit_entry" as const,
    at: row.at.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    objectType: row.object_type,
    objectId: row.object_id,
    ip: row.ip,
    userAgent: row.user_agent,
    requestId: row.request_id,
  };
}
