import type { EntityManager } from "@mikro-orm/postgresql";
import { currentCall, type Actor, type CallContext, type PendingEntry } from "./call-context.ts";

/** Operators' tools and tests calling an audited RPC with the service token alone, no person behind it known. */
export const INTERNAL_CALLER: Actor = Object.freeze({ type: "operator", id: "internal", label: "service token (internal caller)" });

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

/** The fields of a call's pending entry, as the table stores them. */
export function fieldsOf(call: CallContext, entry: PendingEntry): AuditFields {
  const objectId = entry.objectId || undefined;
  return {
    // Creating a merchant is an action on that merchant: its owners see it.
    merchantId: entry.merchantId ?? (entry.objectType === "merchant" ? objectId : undefined),
    actor: call.actor ?? (entry.selfActor && objectId ? { type: "member", id: objectId, label: entry.objectLabel ?? "" } : INTERNAL_CALLER),
    action: entry.action,
    objectType: entry.objectType,
    objectId,
    ip: call.ip,
    userAgent: call.userAgent,
    requestId: call.requestId,
  };
}

const INSERT = `insert into audit_entries
  (merchant_id, actor_type, actor_id, actor_label, action, object_type, object_id, ip, user_agent, request_id)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const isUuid = (value: string | undefined) => !!value && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

/**
 * Inserts one entry on `em`'s connection, inside `transaction` (default: the
 * one `em` runs in, if any), so the entry commits or rolls back with it.
 */
export async function insertAuditEntry(em: EntityManager, fields: AuditFields, transaction: unknown = em.getTransactionContext()): Promise<void> {
  const params = [
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
  await em.getConnection().execute(INSERT, params, "run", transaction as never);
}

/**
 * An entry a use case records itself, for what is not a successful RPC of
 * its own: a failed login or code (the action is refused, yet the attempt is
 * the record). Origin (ip, user agent, request id) from the current call.
 */
export async function recordAuditEntry(
  em: EntityManager,
  entry: { merchantId: string; actor: Actor; action: string; objectType: string; objectId: string },
): Promise<void> {
  const call = currentCall();
  await insertAuditEntry(em, { ...entry, ip: call?.ip, userAgent: call?.userAgent, requestId: call?.requestId });
}
