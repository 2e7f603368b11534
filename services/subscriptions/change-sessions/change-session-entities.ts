import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { PlanInterval } from "../../catalog/entities.ts";
import type { ChangeSessionStatus } from "./change-session-status-machine.ts";
import { EFFECTIVE_MODES, type EffectiveMode } from "../contract.ts";

export { EFFECTIVE_MODES, type EffectiveMode };

/**
 * Why a change session ended CANCELLED. SUBSCRIPTION_CHANGED: its immediate
 * charge succeeded after the subscription had moved on (another plan, or a
 * status that cannot change plan); the change was not applied and the charge
 * was refunded (apply-paid-change.ts).
 */
import type { ChangeCancellationReason } from "../contract.ts";

/**
 * A merchant-proposed plan change the customer approves on the hosted page
 * (migration 0007). The plans' billing terms are copied in at creation:
 * applying a scheduled change happens inside another transaction (the
 * renewal engine's) where the catalog service cannot be called, and the
 * customer approved exactly these terms. Only the token's SHA-256 is stored.
 */
export const SubscriptionChangeSession = defineEntity({
  name: "SubscriptionChangeSession",
  tableName: "subscription_change_sessions",
  properties: {
    id: p.uuid().primary(),
    subscriptionId: p.uuid(),
    merchantId: p.uuid(),
    tokenHash: p.string().length(64).unique(),
    status: p.string().length(32).$type<ChangeSessionStatus>(),
    currentPlanId: p.uuid(),
    currentInterval: p.string().length(8).$type<PlanInterval>(),
    currentIntervalCount: p.integer(),
    requestedPlanId: p.uuid(),
    requestedAmount: p.decimal("string").precision(38).scale(18),
    requestedCurrency: p.string().length(16),
    requestedInterval: p.string().length(8).$type<PlanInterval>(),
    requestedIntervalCount: p.integer(),
    effectiveMode: p.string().length(16).$type<EffectiveMode>(),
    /** In the requested plan's currency. */
    immediateChargeAmount: p.decimal("string").precision(38).scale(18),
    /** NONE or PRORATE (pricing/proration.ts, migration 0026). */
    proration: p.string().length(16).$type<"NONE" | "PRORATE">().default("NONE"),
    /** PRORATE: what the change came to when it applied (positive: charged; negative: credited). */
    prorationAmount: p.decimal("string").precision(38).scale(18).nullable(),
    successUrl: p.string().length(2048),
    cancelUrl: p.string().length(2048),
    reason: p.string().length(1000).nullable(),
    metadata: p.json<Record<string, unknown>>(),
    expiresAt: p.datetime(),
    /** NEXT_BILLING: the subscription's next billing date at approval; applied at the first billing at or after it. */
    scheduledFor: p.datetime().nullable(),
    cancellationReason: p.string().length(32).$type<ChangeCancellationReason>().nullable(),
    /** The session whose approval superseded this scheduled one. */
    supersededBy: p.uuid().nullable(),
    /** The immediate charge that paid for it (IMMEDIATE with an amount above zero). */
    chargeId: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** Raised by one with each change (platform/record-version.ts), in the transaction recording its event (migration 0020). */
    version: p.integer().default(1),
    approvedAt: p.datetime().nullable(),
    appliedAt: p.datetime().nullable(),
    declinedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
  },
});

export type ChangeSessionRow = InferEntity<typeof SubscriptionChangeSession>;

export const changeSessionEntities = [SubscriptionChangeSession];
