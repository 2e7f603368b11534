import type { EntityManager } from "@mikro-orm/postgresql";
import { currentCall, type Actor, type CallContext, type PendingEntry } from "./call-context.ts";
import { auditEntryInsert, insertAuditEntry, type AuditFields } from "./audit-entry-store.ts";

// The statements are the store's; the audit hooks and writers take the whole surface from here.
export { auditEntryInsert, insertAuditEntry };

/** Operators' tools and tests calling an audited RPC with the service token alone, no person behind it known. */
const INTERNAL_CALLER: Actor = Object.freeze({ type: "operator", id: "internal", label: "service token (internal caller)" });

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

/**
 * The current call's entry, when it is still owed, for a change written by
 * one plain statement outside any transaction (no commit event for the audit
 * subscriber to hook): the statement inserts the entry itself
 * (auditEntryInsert), so both commit together, and calls `written()` once it
 * succeeded. Undefined outside an audited call, under `withoutAuditEntry`, or
 * once the entry is written.
 */
export function owedAuditEntry(): { fields: AuditFields; written(): void } | undefined {
  const call = currentCall();
  const entry = call?.entry;
  if (!call || call.quiet || !entry || entry.state !== "pending") return undefined;
  return {
    fields: fieldsOf(call, entry),
    written: () => {
      entry.state = "written";
    },
  };
}
