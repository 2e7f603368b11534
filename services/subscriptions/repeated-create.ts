import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict } from "../platform/errors.ts";
import { canonicalJson } from "../platform/canonical-json.ts";
import { owesNoAuditEntry } from "../platform/audit/call-context.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { liveSubscriptionByReference } from "./subscription-store.ts";
import { authorizationMinutes } from "./subscription-record.ts";
import { authorizationToken, authorizationUrl } from "./authorization-token.ts";
import type { SubscriptionPorts } from "./ports.ts";

/** A create request as the use case resolved it (the customer found, the email trimmed, the lifetime defaulted). */
type LiveSubscription = NonNullable<Awaited<ReturnType<typeof liveSubscriptionByReference>>>;

export interface ResolvedCreate {
  merchantId: string;
  externalReference: string;
  serviceReference: string | null;
  planId: string;
  walletUserId: string;
  customerEmail: string | null;
  successUrl: string;
  cancelUrl: string;
  minutes: number;
  metadata: Record<string, unknown>;
  couponId?: string | undefined;
  promotionCode?: string | undefined;
  /** The request's Idempotency-Key; null without one. */
  idempotencyKey: string | null;
}

/**
 * A create whose externalReference a live subscription already holds. When it
 * is a retry of the request that made it (the same Idempotency-Key, kept with
 * the subscription, and the same body: a retry whose first attempt went
 * through while its answer was lost, e.g. a 504) and the subscription still
 * awaits the customer, the answer is that subscription with its authorization
 * URL, as the first attempt would have answered: nothing is created, no event,
 * no second audit entry. Anything else is the genuine conflict, 409
 * SUBSCRIPTION_ALREADY_EXISTS, as the contract says of a second live
 * subscription under one reference: the same body without a key or under
 * another key (a key is what tells a retry from a second order, as Stripe's),
 * another body, the same request once the customer approved, declined, or let
 * the link expire (its URL would lead nowhere), or a link whose token cannot
 * be computed again (created before tokens were derived, or under another
 * SECRETS_KEY).
 */
export async function answerRepeatedCreate(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  request: ResolvedCreate,
  /** The live subscription under the reference when the caller has just read it (not read again). */
  found?: LiveSubscription,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow; authorizationUrl: string }> {
  const live = found ?? (await liveSubscriptionByReference(ctx.em, request.merchantId, request.externalReference));
  const authorization = live?.authorization;
  if (!live || !authorization || live.subscription.status !== "PENDING_APPROVAL" || authorization.status !== "PENDING") throw alreadyExists(request);
  if (!sameKey(live.subscription, request) || authorization.expiresAt.getTime() <= ctx.clock.now().getTime()) throw alreadyExists(request);
  if (!sameRequest(live.subscription, authorization, request)) throw alreadyExists(request);
  const { token, hash } = authorizationToken(ports.linkKey, authorization.id);
  if (hash !== authorization.tokenHash) throw alreadyExists(request);
  owesNoAuditEntry();
  return { subscription: live.subscription, authorization, authorizationUrl: authorizationUrl(ports.publicBaseUrl, token) };
}

const alreadyExists = (request: { externalReference: string }) =>
  conflict("SUBSCRIPTION_ALREADY_EXISTS", `externalReference: a live subscription with externalReference "${request.externalReference}" already exists`);

/** Made under this request's Idempotency-Key: a key there must be, on both. */
const sameKey = (sub: SubscriptionRow, r: ResolvedCreate): boolean => r.idempotencyKey !== null && sub.createIdempotencyKey === r.idempotencyKey;

/** Every field of the create that the subscription keeps, the discount it asked for included. */
function sameRequest(sub: SubscriptionRow, authorization: AuthorizationRow, r: ResolvedCreate): boolean {
  return (
    sub.planId === r.planId &&
    sub.walletUserId === r.walletUserId &&
    (sub.customerEmail ?? null) === r.customerEmail &&
    (sub.serviceReference ?? null) === r.serviceReference &&
    sub.successUrl === r.successUrl &&
    sub.cancelUrl === r.cancelUrl &&
    authorizationMinutes(authorization.createdAt, authorization.expiresAt) === r.minutes &&
    canonicalJson(sub.metadata) === canonicalJson(r.metadata) &&
    sameDiscount(sub, r)
  );
}

function sameDiscount(sub: SubscriptionRow, r: ResolvedCreate): boolean {
  if (r.couponId !== undefined) return sub.discountCouponId === r.couponId && !sub.discountPromotionCodeId;
  // Promotion codes are matched case-insensitively (discount-store.ts promotionCodeIdByCode).
  if (r.promotionCode !== undefined) return sub.discountPromotionCode?.toUpperCase() === r.promotionCode.toUpperCase();
  return !sub.discountCouponId;
}
