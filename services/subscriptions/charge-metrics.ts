import type { EventSubscriber, FlushEventArgs } from "@mikro-orm/core";
import type { ChargeKind } from "../platform/observability/metrics.ts";
import { SubscriptionCharge, type ChargeRow } from "./entities.ts";

type ChargeSettled = (kind: ChargeKind, outcome: "succeeded" | "failed", reason: string) => void;

/**
 * Reports every subscription charge that reaches SUCCEEDED or FAILED, whatever
 * path settled it (first payment, renewal, retry, plan change, sweep), by
 * watching the flushes of charge rows: nothing in the charge protocol has to
 * remember to count. Reasons are the charge's failure codes (a bounded set).
 */
export function chargeMetricsSubscriber(settled: ChargeSettled): EventSubscriber {
  return {
    getSubscribedEntities: () => [SubscriptionCharge],
    afterFlush(args: FlushEventArgs) {
      for (const cs of args.uow.getChangeSets()) {
        if (cs.meta.className !== SubscriptionCharge.meta.className) continue;
        const status = (cs.payload as Partial<ChargeRow>).status;
        if (status !== "SUCCEEDED" && status !== "FAILED") continue;
        const row = cs.entity as ChargeRow;
        settled(
          chargeKind(row),
          status === "SUCCEEDED" ? "succeeded" : "failed",
          status === "SUCCEEDED" ? "none" : (row.failureReason ?? "unknown").toLowerCase(),
        );
      }
    },
  };
}

/** A plan change's immediate charge; period 0 (the first payment); a later attempt at a period (a retry); else a renewal. */
function chargeKind(row: Pick<ChargeRow, "changeSessionId" | "periodIndex" | "attempt">): ChargeKind {
  if (row.changeSessionId) return "plan_change";
  if (row.periodIndex === 0) return "first";
  if (row.attempt > 1) return "retry";
  return "renewal";
}
