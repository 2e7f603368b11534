/** The audit entry as merchants read it (REST body, dashboard rows): built by audit-entry-record.ts. */
export interface AuditEntryRecord {
  id: string;
  object: "audit_entry";
  at: string;
  actor: { type: string; id: string; label: string };
  action: string;
  objectType: string;
  objectId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}
