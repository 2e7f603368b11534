import { DASHBOARD } from "./paths.ts";

/** The dashboard's words for codes, and its navigation (only pages that exist). */
const ROLE_TEXT: Record<string, string> = { OWNER: "Owner", ADMIN: "Admin", DEVELOPER: "Developer", SUPPORT: "Support", VIEWER: "Viewer" };
export const roleText = (role: string) => ROLE_TEXT[role] ?? role;

export const ROLE_DESCRIPTIONS: { value: string; label: string; description: string }[] = [
  { value: "OWNER", label: "Owner", description: "Everything. A merchant always keeps at least one owner." },
  { value: "ADMIN", label: "Admin", description: "Everything." },
  { value: "DEVELOPER", label: "Developer", description: "API keys, webhooks and events; reads everything else." },
  { value: "SUPPORT", label: "Support", description: "Pauses, resumes and cancels subscriptions and refunds charges; reads everything else." },
  { value: "VIEWER", label: "Viewer", description: "Reads everything; changes nothing." },
];

const STATUS_TEXT: Record<string, string> = { INVITED: "Invited", ACTIVE: "Active" };
export const memberStatusText = (status: string) => STATUS_TEXT[status] ?? status;

export const NAV: { href: string; label: string }[] = [
  { href: DASHBOARD, label: "Overview" },
  { href: `${DASHBOARD}/subscriptions`, label: "Subscriptions" },
  { href: `${DASHBOARD}/plans`, label: "Plans" },
  { href: `${DASHBOARD}/refunds`, label: "Refunds" },
  { href: `${DASHBOARD}/balance`, label: "Balance" },
  { href: `${DASHBOARD}/payouts`, label: "Payouts" },
  { href: `${DASHBOARD}/webhooks`, label: "Webhooks" },
  { href: `${DASHBOARD}/events`, label: "Events" },
  { href: `${DASHBOARD}/api-keys`, label: "API keys" },
  { href: `${DASHBOARD}/team`, label: "Team" },
  { href: `${DASHBOARD}/audit-log`, label: "Audit log" },
  { href: `${DASHBOARD}/exports`, label: "Exports" },
];

/** A code nobody wrote words for yet still reads as words ("SOME_NEW_CODE" → "Some new code"). */
const asWords = (code: string) => code.charAt(0) + code.slice(1).toLowerCase().replace(/_/g, " ");
const wordsFor = (table: ReadonlyMap<string, string>) => (code: string) => table.get(code) ?? asWords(code);

/** Subscription statuses as a merchant reads them (the customer's pages say "your"), in the filter's order. */
export const SUBSCRIPTION_STATUS_TEXT = new Map([
  ["PENDING_APPROVAL", "Waiting for the customer"],
  ["TRIALING", "Free trial"],
  ["ACTIVE", "Active"],
  ["PAST_DUE", "Payment overdue"],
  ["UNPAID", "Unpaid"],
  ["PAUSED", "Paused"],
  ["CANCELLED", "Cancelled"],
  ["EXPIRED", "Expired (never approved)"],
]);
export const subscriptionStatusWords = wordsFor(SUBSCRIPTION_STATUS_TEXT);

export const authorizationStatusWords = wordsFor(
  new Map([
    ["PENDING", "Waiting for the customer"],
    ["APPROVED", "Approved"],
    ["DECLINED", "Declined by the customer"],
    ["EXPIRED", "Expired"],
    ["CANCELLED", "Cancelled"],
  ]),
);

export const chargeStatusWords = wordsFor(
  new Map([
    ["PENDING", "Processing"],
    ["SUCCEEDED", "Succeeded"],
    ["FAILED", "Failed"],
  ]),
);
export const refundStatusWords = wordsFor(
  new Map([
    ["PENDING", "Processing"],
    ["SUCCEEDED", "Refunded"],
    ["FAILED", "Failed"],
  ]),
);

export const PLAN_STATUS_TEXT = new Map([
  ["ACTIVE", "Active"],
  ["ARCHIVED", "Archived"],
]);
export const planStatusWords = wordsFor(PLAN_STATUS_TEXT);

export const INTERVAL_TEXT = new Map([
  ["DAY", "Day"],
  ["WEEK", "Week"],
  ["MONTH", "Month"],
  ["YEAR", "Year"],
]);

export const cancellationWords = wordsFor(
  new Map([
    ["MERCHANT_CANCELLED", "by you (the merchant)"],
    ["CUSTOMER_CANCELLED", "by the customer"],
    ["AUTHORIZATION_DECLINED", "the customer declined"],
    ["PAYMENT_FAILED", "payments failed"],
  ]),
);

/** Statuses on the API keys, webhooks, events, refunds, balance and payouts pages. */
export const endpointStatusText = wordsFor(
  new Map([
    ["ENABLED", "Enabled"],
    ["DISABLED", "Disabled"],
  ]),
);
export const deliveryStatusText = wordsFor(
  new Map([
    ["PENDING", "Pending"],
    ["SUCCEEDED", "Delivered"],
    ["FAILED", "Failed"],
  ]),
);
export const attemptOutcomeText = wordsFor(
  new Map([
    ["IN_PROGRESS", "In progress"],
    ["SUCCEEDED", "Succeeded"],
    ["FAILED", "Failed"],
    ["INTERRUPTED", "Interrupted (the worker stopped)"],
  ]),
);
export const balanceTypeText = wordsFor(
  new Map([
    ["SUBSCRIPTION_CHARGE", "Subscription charge"],
    ["REFUND", "Refund"],
    ["PAYMENT_ORDER", "Payment order"],
    ["PAYOUT", "Payout"],
    ["PAYOUT_REVERSAL", "Payout returned"],
    ["ORDER_REFUND", "Payment order refund"],
    ["ADJUSTMENT", "Adjustment"],
  ]),
);
export const destinationStatusText = wordsFor(
  new Map([
    ["PENDING_ACTIVATION", "Cooling period"],
    ["ACTIVE", "Active"],
    ["REMOVED", "Removed"],
  ]),
);
export const payoutStatusText = wordsFor(
  new Map([
    ["PENDING", "Pending"],
    ["IN_REVIEW", "In review"],
    ["PROCESSING", "Processing"],
    ["PAID", "Paid"],
    ["FAILED", "Failed"],
    ["CANCELLED", "Cancelled"],
  ]),
);

/**
 * A service's refusal in words (the codes stay in the API). A code not here
 * shows the service's own message, which names the field and the rule.
 */
const PROBLEMS = new Map([
  ["DESTINATION_EXISTS", "This address is already a payout destination for this asset."],
  ["DESTINATION_NOT_ACTIVE", "This destination cannot be paid out to now: it is still in its cooling period, or removed."],
  ["MERCHANT_BALANCE_INSUFFICIENT", "Your available balance in this asset is too low for this amount and its fee. Nothing moved."],
  ["PAYOUT_IN_PROGRESS", "This payout is already being created. Reload the page in a moment."],
  ["PAYOUTS_UNAVAILABLE", "Payouts are not available on this deployment right now."],
  ["INVALID_STATUS_TRANSITION", "This payout can no longer be cancelled."],
  ["WEBHOOK_ENDPOINT_DISABLED", "This endpoint is disabled: enable it first."],
]);
export const problemText = (code: string, message: string): string => PROBLEMS.get(code) ?? `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
const ACTOR_TEXT: Record<string, string> = { member: "Member", api_key: "API key", operator: "Operator", customer: "Customer" };
export const actorTypeText = (type: string) => ACTOR_TEXT[type] ?? type;
