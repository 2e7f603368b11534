import type { Logger } from "../platform/logger.ts";
import type { ChargeHandlers, ChargeOutcomeHandler } from "./charges/charge-ports.ts";
import { activateOnFirstPayment } from "./first-payment.ts";
import { consumePrice } from "./pricing/consume-price.ts";
import { applyPaidChange } from "./change-sessions/apply-paid-change.ts";
import { isRenewalCharge, renewalSettled } from "./renewals/renewal-outcome.ts";
import type { BillingPolicies } from "./settings/billing-policies.ts";

/**
 * What each purpose of charge does when it settles (charges/charge-ports.ts),
 * registered once where the ports are built: a first payment activates its
 * subscription, a period charge renews it or starts dunning, a plan change's
 * immediate charge applies the change. A charge whose subscription no longer
 * matches what it paid for keeps its money's record and is logged (the
 * waits for a charge in flight make that unreachable; reconciliation reports
 * what it would leave behind).
 */
export function chargeHandlers(policies: BillingPolicies, logger: Logger): ChargeHandlers {
  const mismatch: ChargeOutcomeHandler = async (_em, _clock, sub, charge) => {
    logger.error(
      { chargeId: charge.id, purpose: charge.purpose, subscriptionId: sub.id, status: sub.status },
      "a charge succeeded that no longer matches its subscription's billing",
    );
  };
  const renewal: ChargeOutcomeHandler = async (em, clock, sub, charge, authorization) => {
    if (isRenewalCharge(sub, charge)) await renewalSettled(em, clock, await policies.forMerchant(em, sub.merchantId), sub, charge, authorization);
    else if (charge.status === "SUCCEEDED") await mismatch(em, clock, sub, charge, authorization);
  };
  // A period charge that succeeded used its price's discount period and credit (pricing/consume-price.ts), whatever it then pays for.
  const priced =
    (handler: ChargeOutcomeHandler): ChargeOutcomeHandler =>
    async (em, clock, sub, charge, authorization) => {
      await consumePrice(em, clock, sub, charge, authorization);
      await handler(em, clock, sub, charge, authorization);
    };
  return {
    FIRST_PAYMENT: {
      succeeded: priced(async (em, clock, sub, charge, authorization) =>
        sub.status === "PENDING_APPROVAL" ? activateOnFirstPayment(em, clock, sub, charge, clock.now()) : mismatch(em, clock, sub, charge, authorization),
      ),
    },
    RENEWAL: { succeeded: priced(renewal), failed: renewal },
    PLAN_CHANGE: { succeeded: (em, clock, sub, charge) => applyPaidChange(em, clock, sub, charge, logger) },
  };
}
