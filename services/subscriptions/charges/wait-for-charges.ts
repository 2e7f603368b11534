import { setTimeout as sleep } from "node:timers/promises";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { WALLET_CALL_TIMEOUT_MS } from "../../platform/wallet-calls/wallet-call.ts";
import type { ChargePurpose } from "../contract.ts";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";
import { paymentInProgress, type ChargePorts } from "./charge-ports.ts";
import { settleCharge } from "./settle-charge.ts";

/** Thrown from a transition's guard (under the subscription lock) when a charge is in flight. */
class ChargeInFlight extends Error {
  readonly chargeId: string;
  constructor(chargeId: string) {
    super("charge in flight");
    this.chargeId = chargeId;
  }
}

/**
 * The subscription's charge in flight, if any (call under the subscription
 * lock): of one purpose (RENEWAL: a renewal, a trial's end, a retry), or
 * whatever it pays for.
 */
export async function chargeInFlight(em: EntityManager, subscriptionId: string, purpose?: ChargePurpose): Promise<ChargeRow | null> {
  return em.findOne(SubscriptionCharge, { subscriptionId, status: "PENDING", ...(purpose ? { purpose } : {}) }, { refresh: true });
}

/**
 * How long a request waits for a charge in flight, a settle's wallet call
 * included: a settle is started only while the whole call fits, so the
 * request answers within this bound, inside the caller's RPC deadline
 * (RPC_TIMEOUT_MS ≥ 4 s; the chain is in platform/wallet-calls/wallet-call.ts).
 */
const WAIT_FOR_CHARGE_MS = WALLET_CALL_TIMEOUT_MS + 500;

/**
 * Runs a status change that must not happen under a charge in flight (pause,
 * resume, cancel, a plan change's approval): when its guard throws
 * ChargeInFlight, the charge is settled first (or its holder is waited for,
 * briefly) and the change is tried again on whatever state that left. Past
 * WAIT_FOR_CHARGE_MS the caller gets PAYMENT_IN_PROGRESS (409) and retries.
 */
export async function afterChargeSettles<T>(ctx: UseCaseContext, ports: ChargePorts, attempt: () => Promise<T>): Promise<T> {
  // Wall time on purpose: this bounds how long the request waits, it is not business time.
  const deadline = Date.now() + WAIT_FOR_CHARGE_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ChargeInFlight)) throw err;
      // Only a settle whose wallet call fits in what is left is started; otherwise its holder is waited for.
      const settled =
        deadline - Date.now() >= WALLET_CALL_TIMEOUT_MS
          ? await settleCharge({ em: ctx.em.fork(), clock: ctx.clock }, ports, err.chargeId, false)
          : { state: "in_progress" as const };
      if (settled.state === "in_progress") {
        if (Date.now() + 100 > deadline) throw paymentInProgress("this subscription");
        await sleep(100);
      }
    }
  }
}

/**
 * A transition's guard, under the subscription lock: throws ChargeInFlight
 * when a charge (of `purpose`, or any) is in flight, so afterChargeSettles
 * settles it first and tries the transition again.
 */
export async function refuseUnderCharge(em: EntityManager, subscriptionId: string, purpose?: ChargePurpose): Promise<void> {
  const pending = await chargeInFlight(em, subscriptionId, purpose);
  if (pending) throw new ChargeInFlight(pending.id);
}
