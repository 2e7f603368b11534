import type { EntityManager } from "@mikro-orm/postgresql";
import type { AuditEntryRow } from "./audit-entry-record.ts";

/**
 * Reads of the audit log. Raw SQL because the log has no entity (nothing in
 * the ORM may write or change it; platform/audit/audit-entry-store.ts appends).
 */

/** Which of a merchant's entries to read; each given field narrows it. */
interface AuditEntryFilter {
  merchantId: string;
  /** The actor's id, or its label in any case. */
  actor?: string | undefined;
  action?: string | undefined;
  objectId?: string | undefined;
  /** At or after. */
  from?: Date | undefined;
  /** Strictly before. */
  to?: Date | undefined;
  /** The keyset position: entries strictly older than this one. */
  before?: { createdAt: Date; id: string } | undefined;
}

/**
 * Up to `take` of the merchant's entries, newest first, keyset ordered on
 * (at, id): one range scan of the merchant's index whatever the log's size.
 */
export async function merchantAuditEntries(em: EntityManager, filter: AuditEntryFilter, take: number): Promise<AuditEntryRow[]> {
  const where = ["merchant_id = ?"];
  const params: unknown[] = [filter.merchantId];
  if (filter.actor) {
    where.push("(actor_id = ? or lower(actor_label) = lower(?))");
    params.push(filter.actor, filter.actor);
  }
  if (filter.action) {
    where.push("action = ?");
    params.push(filter.action);
  }
  if (filter.objectId) {
    where.push("object_id = ?");
    params.push(filter.objectId);
  }
  if (filter.from) {
    where.push("at >= ?");
    params.push(filter.from);
  }
  if (filter.to) {
    where.push("at < ?");
    params.push(filter.to);
  }
  if (filter.before) {
    where.push("(at, id) < (?, ?)");
    params.push(filter.before.createdAt, filter.before.id);
  }
  return em.getConnection().execute<AuditEntryRow[]>(
    `select id, at, actor_type, actor_id, actor_label, action, object_type, object_id, ip, user_agent, request_id
       from audit_entries where ${where.join(" and ")} order by at desc, id desc limit ${take}`,
    params,
  );
}
