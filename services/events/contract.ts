/** Webhook requests in flight at once per endpoint, unless the endpoint says otherwise (or is `ordered`). */
export const WEBHOOK_MAX_IN_FLIGHT_DEFAULT = 10;
export const WEBHOOK_MAX_IN_FLIGHT_LIMIT = 100;

/**
 * Every event type the service emits: the one list, mirrored in docs/webhooks.md (a test keeps them equal).
 * Webhook endpoints subscribe to these names (or "*").
 */
export const EVENT_TYPES = [
  "subscription.created",
  "subscription.activated",
  "subscription.trialing",
  "subscription.authorization_declined",
  "subscription.expired",
  "subscription.paused",
  "subscription.resumed",
  "subscription.cancelled",
  "subscription.charge_upcoming",
  "subscription.charge_succeeded",
  "subscription.charge_failed",
  "subscription.charge_refunded",
  "subscription.past_due",
  "subscription.renewed",
  "subscription.unpaid",
  "subscription.plan_changed",
  "subscription.funding_asset_changed",
  "subscription.funding_fallback_changed",
  "subscription.charge_at_risk",
  "subscription.change_session.created",
  "subscription.change_session.approved",
  "subscription.change_session.declined",
  "subscription.change_session.expired",
  "subscription.change_session.applied",
  "subscription.change_session.cancelled",
  "subscription.discount_applied",
  "subscription.discount_ended",
  "coupon.created",
  "payment_order.created",
  "payment_order.confirming",
  "payment_order.paid",
  "payment_order.underpaid",
  "payment_order.overpaid",
  "payment_order.expired",
  "payment_order.late_payment",
  "payment_order.refund_created",
  "payment_order.refunded",
  "payment_order.refund_failed",
  "payment_order.refund_expired",
  "payout_destination.created",
  "payout_destination.removed",
  "payout_destination.activated",
  "payout.created",
  "payout.processing",
  "payout.paid",
  "payout.failed",
  "payout.cancelled",
  "plan.created",
  "plan.updated",
  "plan.archived",
  "plan.unarchived",
  "billing_settings.updated",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/** The webhook endpoint and delivery statuses (their machines: endpoint-status.ts, delivery-status.ts). */
export const VISIBLE_ENDPOINT_STATUSES = ["ENABLED", "DISABLED"] as const;
/** A DELETED endpoint answers 404: never shown. */
export const ENDPOINT_STATUSES = [...VISIBLE_ENDPOINT_STATUSES, "DELETED"] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

export const DELIVERY_STATUSES = ["PENDING", "SUCCEEDED", "FAILED"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
