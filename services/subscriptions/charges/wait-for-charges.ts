import { setTimeout as sleep } from "node:timers/promises";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../../platform/use-case.ts";
import type { ChargeRow } from "../entities.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { pendingRenewalCharge } from "../renewals/pending-renewal-charge.ts";
import { pendingChangeCharge } from "../change-sessions/change-session-store.ts";
import { paymentInProgress } from "./lease.ts";
import { settleCharge } from "./settle-charge.ts";

/** Thrown from a transition's guard (under the subscription lock) when a charge is in flight. */
export class ChargeInFlight extends Error {
  readonly chargeId: string;
  constructor(chargeId: string) {
    super("charge in flight");
    this.chargeId = chargeId;
  }
}

/** The subscription's renewal or plan-change charge in flight, if any (call under the subscription lock). */
export async function chargeInFlight(em: EntityManager, subscriptionId: string): Promise<ChargeRow | null> {
  return (await pendingChangeCharge(em, subscriptionId)) ?? (await pendingRenewalCharge(em, subscriptionId));
}

export const WAIT_FOR_CHARGE_MS = 5_000;

/**
 * Runs a status change that must not happen under a charge in flight (pause,
 * resume, cancel): when its guard throws ChargeInFlight, the charge is
 * settled first (or its holder is waited for, briefly) and the change is
 * tried again on whatever state that left. Past WAIT_FOR_CHARGE_MS the
 * caller gets PAYMENT_IN_PROGRESS (409) and retries.
 */
export async function afterChargeSettles<T>(ctx: UseCaseContext, ports: SubscriptionPorts, attempt: () => Promise<T>): Promise<T> {
  // Wall time on purpose: this bounds how long the request waits, it is not business time.
  const deadline = Date.now() + WAIT_FOR_CHARGE_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ChargeInFlight)) throw err;
      const settled = await settleCharge({ em: ctx.em.fork(), clock: ctx.clock }, ports, err.chargeId, false);
      if (settled.state === "in_progress") {
        if (Date.now() > deadline) throw paymentInProgress("this subscription");
        await sleep(100);
      }
    }
  }
}
