import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError, invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { parseEmail } from "../platform/email.ts";
import { eventRow } from "../events/record-event.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { insertNewSubscription, liveSubscriptionByReference } from "./subscription-store.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { authorizationToken, authorizationUrl } from "./authorization-token.ts";
import { fetchPlan, fetchWalletUserByEmail, fetchWalletUserById, refuseArchivedPlan, type SubscriptionPorts } from "./ports.ts";
import { AUTHORIZATION_MINUTES, URL_MAX_LENGTH } from "./contract.ts";
import { checkDiscountRequest, hasDiscountRequest } from "./pricing/redeem-discount.ts";
import { insertWithDiscount } from "./pricing/create-with-discount.ts";
import { noteAuditObject } from "../platform/audit/call-context.ts";
import { answerRepeatedCreate, type ResolvedCreate } from "./repeated-create.ts";

interface CreateSubscriptionInput {
  merchantId: string;
  externalReference: string;
  serviceReference?: string | undefined;
  planId: string;
  walletUserId?: string | undefined;
  customerEmail?: string | undefined;
  successUrl: string;
  cancelUrl: string;
  authorizationExpiresInMinutes?: number | undefined;
  metadata: Record<string, unknown>;
  /** A discount from the start (pricing/): a coupon, or a promotion code, not both. */
  couponId?: string | undefined;
  promotionCode?: string | undefined;
  /** The merchant's Idempotency-Key (the gateway passes it on; gRPC callers may send their own): kept with the subscription. */
  idempotencyKey?: string | undefined;
}

interface CreatedSubscription {
  subscription: SubscriptionRow;
  authorization: AuthorizationRow;
  authorizationUrl: string;
}

/**
 * Creates a subscription awaiting the customer's approval and its
 * authorization (a single-use link with an expiry). The gateway validates the
 * same rules with JSON schemas; they are checked again here because internal
 * callers reach this over gRPC directly. The same request again under the
 * same Idempotency-Key, while that subscription awaits the customer, answers
 * it again (repeated-create.ts); without a key it is a conflict.
 *
 * `callSignal`: the RPC's, aborted at the caller's deadline. Nothing is
 * written once it has passed: the gateway answered 504 and keeps the
 * Idempotency-Key in flight only for as long as a write started before the
 * deadline can take (gateway/idempotency.ts outcomeUnknownMs).
 */
export async function createSubscription(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: CreateSubscriptionInput,
  callSignal?: AbortSignal,
): Promise<CreatedSubscription> {
  const minutes = input.authorizationExpiresInMinutes || AUTHORIZATION_MINUTES.default;
  validate(input, minutes);
  // The one email rule: trimmed (and stored so), otherwise as sent; the wallet matches it case-insensitively.
  const customerEmail = input.customerEmail === undefined ? undefined : parseEmail("customerEmail", input.customerEmail);

  // Whichever identifies the customer must name an existing wallet user; both must name the same one.
  // The lookups run together; awaiting them in order makes PLAN_NOT_FOUND win over WALLET_USER_NOT_FOUND.
  const planLookup = fetchPlan(ports, input.merchantId, input.planId);
  const idLookup = input.walletUserId !== undefined ? fetchWalletUserById(ports, input.walletUserId) : Promise.resolve(undefined);
  const emailLookup = customerEmail !== undefined ? fetchWalletUserByEmail(ports, customerEmail) : Promise.resolve(undefined);
  await Promise.allSettled([planLookup, idLookup, emailLookup]);
  const plan = await planLookup;
  const byId = await idLookup;
  const byEmail = await emailLookup;
  if (byId && byEmail && byId.id !== byEmail.id) {
    throw invalid("INVALID_REQUEST", "customerEmail: names a different wallet user than walletUserId");
  }
  const walletUserId = (byId ?? byEmail)!.id;
  refuseArchivedPlan(plan, "planId");
  checkDiscountRequest(input, false);

  const resolved: ResolvedCreate = {
    merchantId: input.merchantId,
    externalReference: input.externalReference,
    serviceReference: input.serviceReference ?? null,
    planId: plan.id,
    walletUserId,
    customerEmail: customerEmail ?? null,
    successUrl: input.successUrl,
    cancelUrl: input.cancelUrl,
    minutes,
    metadata: input.metadata,
    couponId: input.couponId,
    promotionCode: input.promotionCode,
    idempotencyKey: input.idempotencyKey ?? null,
  };
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + minutes * 60_000);
  const subscription = {
    id: randomUUID(),
    merchantId: input.merchantId,
    planId: plan.id,
    walletUserId,
    customerEmail: customerEmail ?? null,
    externalReference: input.externalReference,
    serviceReference: input.serviceReference ?? null,
    successUrl: input.successUrl,
    cancelUrl: input.cancelUrl,
    metadata: input.metadata,
    status: "PENDING_APPROVAL",
    pausedFromStatus: null,
    cancellationReason: null,
    fundingAsset: null,
    billingAnchor: null,
    currentPeriodStart: null,
    currentPeriodEnd: null,
    nextBillingAt: null,
    trialEnd: null,
    createdAt: now,
    updatedAt: now,
    activatedAt: null,
    pausedAt: null,
    cancelledAt: null,
    expiredAt: null,
    createIdempotencyKey: input.idempotencyKey ?? null,
    // Every column the insert does not name keeps its database default; the record shows version 1 (a new record).
    version: 1,
  } satisfies Partial<SubscriptionRow> as SubscriptionRow;
  const authorizationId = randomUUID();
  // Derived from the id (authorization-token.ts), so a repeated create can answer the same URL.
  const { token, hash } = authorizationToken(ports.linkKey, authorizationId);
  const authorization = {
    id: authorizationId,
    subscriptionId: subscription.id,
    merchantId: input.merchantId,
    tokenHash: hash,
    status: "PENDING",
    expiresAt,
    approvedAt: null,
    declinedAt: null,
    expiredAt: null,
    usedAt: null,
    approvedWalletUserId: null,
    fundingAsset: null,
    createdAt: now,
  } satisfies AuthorizationRow;
  // Inserted with plain SQL (no unit-of-work event): the audit entry learns the new id here.
  noteAuditObject("Subscription", subscription);
  callSignal?.throwIfAborted();
  if (hasDiscountRequest(input)) {
    // Looked for first: a repeat must not redeem the coupon again (a code used up by the first attempt would refuse it).
    const live = await liveSubscriptionByReference(ctx.em, input.merchantId, input.externalReference);
    if (live) return answerRepeatedCreate(ctx, ports, resolved, live);
    try {
      await insertWithDiscount(ctx, { subscription, authorization }, input, plan, callSignal);
    } catch (err) {
      if (isUniqueViolation(err, "subscriptions_merchant_external_live_key")) return answerRepeatedCreate(ctx, ports, resolved);
      // A repeat racing its first attempt (a 504, then the retry while the first still ran): the code was used up by
      // that attempt, which committed while this one waited for the code's row. The reference decides, as above.
      const raced = err instanceof DomainError && (await liveSubscriptionByReference(ctx.em, input.merchantId, input.externalReference).catch(() => null));
      if (raced) return answerRepeatedCreate(ctx, ports, resolved, raced);
      throw err;
    }
    return { subscription, authorization, authorizationUrl: authorizationUrl(ports.publicBaseUrl, token) };
  }
  // A plain row (no entity a later query could auto-flush): it is inserted below with the rows, in one statement.
  const event = eventRow(ctx.clock, {
    merchantId: input.merchantId,
    type: "subscription.created",
    data: subscriptionRecord(subscription, authorization),
  });
  try {
    // One statement, one round trip: the subscription, its authorization and the event commit together.
    await insertNewSubscription(ctx.em, { subscription, authorization, event });
  } catch (err) {
    // The reference is taken (the row committed before ours, or long ago): a retry under the same key, or a conflict.
    if (isUniqueViolation(err, "subscriptions_merchant_external_live_key")) return answerRepeatedCreate(ctx, ports, resolved);
    throw err;
  }
  // No delayed job per authorization: the link reads as EXPIRED the moment expiresAt passes
  // (authorization-lookup.ts), and the expiry sweep (subscriptions.sweep, set-based) records the
  // change and its event within one SWEEP_INTERVAL_MS. A job each would cost a Redis write per create
  // and, at 5,000 due at once, drain slower than the sweep (docs/benchmarks.md, B6).
  return { subscription, authorization, authorizationUrl: authorizationUrl(ports.publicBaseUrl, token) };
}

function validate(input: CreateSubscriptionInput, minutes: number): void {
  const text = (field: string, value: string | undefined, min: number, max: number) => {
    if (value === undefined) return;
    if (value.length < min || value.length > max) throw invalid("INVALID_REQUEST", `${field}: must be ${min} to ${max} characters`);
  };
  text("externalReference", input.externalReference, 1, 200);
  text("serviceReference", input.serviceReference, 0, 200);
  text("idempotencyKey", input.idempotencyKey, 1, 200);
  if (input.walletUserId === undefined && input.customerEmail === undefined) {
    throw invalid("INVALID_REQUEST", "walletUserId: at least one of walletUserId or customerEmail is required");
  }
  if (input.walletUserId !== undefined && !isUuid(input.walletUserId)) throw invalid("INVALID_REQUEST", "walletUserId: must be a uuid");
  for (const [field, value] of [
    ["successUrl", input.successUrl],
    ["cancelUrl", input.cancelUrl],
  ] as const) {
    if (!isHttpUrl(value)) throw invalid("INVALID_REQUEST", `${field}: must be an absolute http(s) URL of at most ${URL_MAX_LENGTH} characters`);
  }
  if (!Number.isInteger(minutes) || minutes < AUTHORIZATION_MINUTES.min || minutes > AUTHORIZATION_MINUTES.max) {
    throw invalid("INVALID_REQUEST", `authorizationExpiresInMinutes: must be an integer from ${AUTHORIZATION_MINUTES.min} to ${AUTHORIZATION_MINUTES.max}`);
  }
}

/** Redirect targets must be web addresses: the page sends the customer's browser there. */
export function isHttpUrl(value: string): boolean {
  if (value.length > URL_MAX_LENGTH) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** PostgreSQL's unique_violation (23505) on the named constraint or index (raw, or as the ORM wraps it). */
function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown; name?: unknown; message?: unknown };
  if (e?.code === "23505" && e.constraint === constraint) return true;
  return e?.name === "UniqueConstraintViolationException" && typeof e.message === "string" && e.message.includes(constraint);
}
