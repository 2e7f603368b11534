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
  { href: `${DASHBOARD}/team`, label: "Team" },
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

export const chargeStatusWords = wordsFor(new Map([["PENDING", "Processing"], ["SUCCEEDED", "Succeeded"], ["FAILED", "Failed"]]));
export const refundStatusWords = wordsFor(new Map([["PENDING", "Processing"], ["SUCCEEDED", "Refunded"], ["FAILED", "Failed"]]));

export const PLAN_STATUS_TEXT = new Map([["ACTIVE", "Active"], ["ARCHIVED", "Archived"]]);
export const planStatusWords = wordsFor(PLAN_STATUS_TEXT);

export const INTERVAL_TEXT = new Map([["DAY", "Day"], ["WEEK", "Week"], ["MONTH", "Month"], ["YEAR", "Year"]]);

export const cancellationWords = wordsFor(
  new Map([
    ["MERCHANT_CANCELLED", "by you (the merchant)"],
    ["CUSTOMER_CANCELLED", "by the customer"],
    ["AUTHORIZATION_DECLINED", "the customer declined"],
    ["PAYMENT_FAILED", "payments failed"],
  ]),
);
