import type { EntityManager } from "@mikro-orm/postgresql";
import type { FlushEventArgs } from "@mikro-orm/core";
import type { Orm } from "../platform/database/orm.ts";
import type { ChargeKind } from "../platform/observability/metrics.ts";
import { SubscriptionCharge, type ChargeRow } from "./entities.ts";

type ChargeSettled = (kind: ChargeKind, outcome: "succeeded" | "failed", reason: string) => void;

/** Per ORM (its metadata, shared by every fork): the counters registered by countSettledCharges. */
const countersByOrm = new WeakMap<object, ChargeSettled[]>();

/**
 * Reports every subscription charge that reaches SUCCEEDED or FAILED, whatever
 * path settled it (first payment, renewal, retry, plan change, sweep), by
 * watching the flushes of charge rows: nothing in the charge protocol has to
 * remember to count. The one settle that writes charges without the unit of
 * work (a renewal set's, tracked-rows.ts) reports them with settledWithout.
 * Reasons are the charge's failure codes (a bounded set).
 */
export function countSettledCharges(orm: Orm, settled: ChargeSettled): void {
  orm.em.getEventManager().registerSubscriber({
    getSubscribedEntities: () => [SubscriptionCharge],
    afterFlush(args: FlushEventArgs) {
      for (const cs of args.uow.getChangeSets()) {
        if (cs.meta.className !== SubscriptionCharge.meta.className) continue;
        const status = (cs.payload as Partial<ChargeRow>).status;
        if (status === "SUCCEEDED" || status === "FAILED") report(settled, cs.entity as ChargeRow);
      }
    },
  });
  const key = orm.em.getMetadata();
  countersByOrm.set(key, [...(countersByOrm.get(key) ?? []), settled]);
}

/** Charges the caller just settled with a statement of its own (SUCCEEDED or FAILED rows; others are ignored): counted as a flush would count them. */
export function settledWithout(em: EntityManager, rows: readonly ChargeRow[]): void {
  for (const settled of countersByOrm.get(em.getMetadata()) ?? []) {
    for (const row of rows) if (row.status === "SUCCEEDED" || row.status === "FAILED") report(settled, row);
  }
}

function report(settled: ChargeSettled, row: ChargeRow): void {
  settled(
    chargeKind(row),
    row.status === "SUCCEEDED" ? "succeeded" : "failed",
    row.status === "SUCCEEDED" ? "none" : (row.failureReason ?? "unknown").toLowerCase(),
  );
}

/** A plan change's immediate charge; period 0 (the first payment); a later attempt at a period (a retry); else a renewal. */
function chargeKind(row: Pick<ChargeRow, "changeSessionId" | "periodIndex" | "attempt">): ChargeKind {
  if (row.changeSessionId) return "plan_change";
  if (row.periodIndex === 0) return "first";
  if (row.attempt > 1) return "retry";
  return "renewal";
}
