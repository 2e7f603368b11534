import type { EntityManager } from "@mikro-orm/postgresql";
import type { EventArgs, EventSubscriber, TransactionEventArgs } from "@mikro-orm/core";
import type { Orm } from "../database/orm.ts";
import { currentCall, noteAuditObject } from "./call-context.ts";
import { fieldsOf, insertAuditEntry } from "./audit-writer.ts";

const writingIn = new WeakMap<object, unknown>();

/**
 * Writes the current call's audit entry inside the first transaction of that
 * call to commit, just before it commits: the entry and the change it records
 * commit together or not at all, and no use case has to remember it. A call
 * whose transaction rolls back (a refused action) keeps its entry pending, so
 * a refused action writes nothing; once one commit carried it, later
 * transactions of the same call write nothing more (one entry per action).
 *
 * The entity the table names (`entity`) gives the entry its object id and
 * merchant when the request did not: the first such row created or changed
 * in the call (the plan a create made, the subscription a hosted page
 * approved by token).
 */
export function recordAuditOnCommit(orm: Orm): void {
  const note = (args: EventArgs<unknown>) => {
    const name = args.meta?.className ?? args.meta?.name;
    if (name) noteAuditObject(name, args.entity as { id?: unknown; merchantId?: unknown; email?: unknown });
  };
  const subscriber: EventSubscriber = {
    afterCreate: note,
    afterUpdate: note,
    async beforeTransactionCommit(args: TransactionEventArgs) {
      if (args.transaction?.savepointName) return; // a nested transaction: the outer commit decides
      const call = currentCall();
      const entry = call?.entry;
      if (!call || call.quiet || !entry || entry.state !== "pending") return;
      entry.state = "writing";
      writingIn.set(entry, args.transaction);
      await insertAuditEntry(args.em as EntityManager, fieldsOf(call, entry), args.transaction);
    },
    afterTransactionCommit(args: TransactionEventArgs) {
      const entry = currentCall()?.entry;
      if (entry?.state === "writing" && writingIn.get(entry) === args.transaction) entry.state = "written";
    },
    afterTransactionRollback(args: TransactionEventArgs) {
      const entry = currentCall()?.entry;
      if (entry?.state === "writing" && writingIn.get(entry) === args.transaction) entry.state = "pending";
    },
  };
  orm.em.getEventManager().registerSubscriber(subscriber);
}
