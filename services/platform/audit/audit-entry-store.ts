import type { EntityManager } from "@mikro-orm/postgresql";
import type { Actor } from "./call-context.ts";

/** An entry's fields, as the audit_entries table stores them. */
export interface AuditFields {
  merchantId: string | undefined;
  actor: Actor;
  action: string;
  objectType: string;
  objectId: string | undefined;
  ip: string | undefined;
  userAgent: string | undefined;
  requestId: string | undefined;
}

/** Appended with raw SQL: the log has no entity (nothing in the ORM may write or change it). */
const COLUMNS = "merchant_id, actor_type, actor_id, actor_label, action, object_type, object_id, ip, user_agent, request_id";
const INSERT = `insert into audit_entries (${COLUMNS}) values (${COLUMNS.split(", ")
  .map(() => "?")
  .join(", ")})`;

const isUuid = (value: string | undefined) => !!value && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

/** An entry's values, in COLUMNS' order. */
function entryValues(fields: AuditFields): unknown[] {
  return [
    isUuid(fields.merchantId) ? fields.merchantId : null,
    fields.actor.type,
    fields.actor.id,
    fields.actor.label,
    fields.action,
    fields.objectType,
    fields.objectId ?? null,
    fields.ip ?? null,
    fields.userAgent ?? null,
    fields.requestId ?? null,
  ];
}

/**
 * The insert of one entry as a part of a larger statement (a CTE of the
 * statement that makes the change), its placeholders numbered from
 * `firstParam`: the entry commits with the change, in the same round trip.
 */
export function auditEntryInsert(fields: AuditFields, firstParam: number): { sql: string; values: unknown[] } {
  const values = entryValues(fields);
  return { sql: `insert into audit_entries (${COLUMNS}) values (${values.map((_, i) => `$${firstParam + i}`).join(", ")})`, values };
}

/**
 * Inserts one entry on `em`'s connection, inside `transaction` (default: the
 * one `em` runs in, if any), so the entry commits or rolls back with it.
 */
export async function insertAuditEntry(em: EntityManager, fields: AuditFields, transaction: unknown = em.getTransactionContext()): Promise<void> {
  await em.getConnection().execute(INSERT, entryValues(fields), "run", transaction as never);
}
