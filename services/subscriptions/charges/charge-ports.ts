import type { Client } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Clock } from "../../platform/clock.ts";
import type { Logger } from "../../platform/logger.ts";
import { DomainError } from "../../platform/errors.ts";
import type { ChargePurpose } from "../contract.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "../entities.ts";

/**
 * What a settled charge's outcome does to its subscription, per purpose
 * (first payment, renewal, plan change). charges/ knows none of them: the
 * handlers are registered where the subscriptions service is wired
 * (charge-outcomes.ts), so settling a charge never reaches into dunning,
 * approval or plan-change code that is not its own purpose's.
 *
 * Called inside the settling transaction: the subscription is locked, the
 * charge row already marked SUCCEEDED or FAILED (subscription.charge_succeeded
 * recorded). `authorization`: the subscription's current one when the caller
 * has read it already; undefined when the handler must read it.
 */
export type ChargeOutcomeHandler = (
  em: EntityManager,
  clock: Clock,
  sub: SubscriptionRow,
  charge: ChargeRow,
  authorization: AuthorizationRow | null | undefined,
) => Promise<void>;

export type ChargeHandlers = Record<ChargePurpose, { succeeded: ChargeOutcomeHandler; failed?: ChargeOutcomeHandler }>;

/** What the charge protocol needs besides the database (SubscriptionPorts provides it). */
export interface ChargePorts {
  wallet: Client<typeof WalletService>;
  logger: Logger;
  chargeHandlers: ChargeHandlers;
  /** Receipt links point here (receipt-number.ts). */
  publicBaseUrl: string;
}

/** A charge of `subject` is in flight: the caller answers 409 and the client retries shortly. */
export const paymentInProgress = (subject: string) =>
  new DomainError("failed_precondition", "PAYMENT_IN_PROGRESS", `a payment for ${subject} is being processed; try again in a moment`);

/** The charges' wallet-call table (platform/wallet-calls/). */
export const CHARGES_TABLE = "subscription_charges";
