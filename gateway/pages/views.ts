import { fileURLToPath } from "node:url";
import { Eta } from "eta";
import type { AuditEntryRecord } from "../../services/audit/contract.ts";

/**
 * The hosted pages' HTML: Eta templates in `views/` (a shared layout and
 * partials), rendered with `autoEscape` on. `<%= … %>` escapes every value
 * (& < > " '), so a value from a merchant, a customer or a URL cannot open a
 * tag or leave an attribute; raw output `<%~ … %>` is only for the layout's
 * body and for includes of other templates (test/gateway/page-views.test.ts
 * checks the files for anything else). Templates only lay out what the
 * models below carry: words and amounts are made in TypeScript (page-text.ts).
 *
 * Form names are a contract for browser automation (docs/hosted-pages.md):
 * email, password, fundingAsset, fallbackAsset1, fallbackAsset2, pin, subscriptionId, address, csrf and
 * action = login | approve | cancel | logout | cancel-subscription | change-funding-asset | change-funding-fallback | claim.
 */
export interface PageViews {
  render<K extends keyof PageModels>(name: K, model: PageModels[K]): string;
}

export function pageViews(): PageViews {
  const eta = new Eta({
    views: fileURLToPath(new URL("./views/", import.meta.url)),
    autoEscape: true,
    // Compiled once per process: the files do not change under a running gateway.
    cache: true,
  });
  return { render: (name, model) => eta.render(`/${name}`, model) };
}

export interface PageModels {
  status: StatusModel;
  "approval-login": ApprovalLoginModel;
  "approval-funding": ApprovalFundingModel;
  "self-service-login": SelfServiceLoginModel;
  "self-service": SelfServiceModel;
  claim: ClaimModel;
  "claim-done": ClaimDoneModel;
  "dashboard/sign-in": DashboardSignInModel;
  "dashboard/invite": DashboardInviteModel;
  "dashboard/enrol": DashboardEnrolModel;
  "dashboard/recovery-codes": { codes: string[] };
  "dashboard/message": { frame: DashboardFrame; heading: string; message: string };
  "dashboard/team": DashboardTeamModel;
  "dashboard/api-keys": DashboardApiKeysModel;
  "dashboard/webhooks": DashboardWebhooksModel;
  "dashboard/webhook-endpoint": DashboardWebhookEndpointModel;
  "dashboard/events": DashboardEventsModel;
  "dashboard/refunds": DashboardRefundsModel;
  "dashboard/balance": DashboardBalanceModel;
  "dashboard/payouts": DashboardPayoutsModel;
  "dashboard/audit-log": DashboardAuditLogModel;
  "dashboard/exports": DashboardExportsModel;
  receipt: ReceiptModel;
}

/** The refund claim page: one question (the customer's address), then `action` = claim. */
interface ClaimModel extends FormModel {
  summary: SummaryModel;
  network: string;
  /** What a valid address looks like on the network. */
  hint: string;
  address: string;
  error?: string | undefined;
  /** "Send 0.00040000 BTC to this address". */
  claimLabel: string;
}

/** A claimed refund: what happens now, in [role=status]. */
interface ClaimDoneModel {
  title: string;
  message: string;
  address?: string | undefined;
}

interface DashboardSignInModel extends FormModel {
  step: "password" | "code";
  email: string;
  error?: string | undefined;
}

interface DashboardInviteModel extends FormModel {
  merchantName: string;
  email: string;
  roleText: string;
  minLength: number;
  error?: string | undefined;
}

interface DashboardEnrolModel extends FormModel {
  /** Base32, in [data-totp-secret]; shown grouped by four for people. */
  secret: string;
  secretGrouped: string;
  /** The otpauth:// URI's QR code as one SVG path of unit squares (drawn by the template, no raw markup). */
  qr: { viewBox: string; path: string };
  error?: string | undefined;
}

/** What every dashboard page shows around its content: who is logged in, the navigation, the logout form's CSRF token. */
export interface DashboardFrame {
  title: string;
  merchantName: string;
  email: string;
  roleText: string;
  csrf: string;
  nav: { href: string; label: string; current: boolean }[];
}

interface DashboardTeamModel {
  frame: DashboardFrame;
  canManage: boolean;
  members: { id: string; email: string; role: string; roleText: string; statusText: string; self: boolean }[];
  roles: { value: string; label: string; description: string }[];
  inviteEmail: string;
  inviteUrl?: string | undefined;
  invitedEmail?: string | undefined;
  error?: string | undefined;
  notice?: string | undefined;
}

/** Keyset paging of a dashboard list: the next page, and the first one when not on it. */
interface DashboardPaging {
  nextUrl?: string | undefined;
  firstUrl?: string | undefined;
}

interface DashboardOption {
  value: string;
  label: string;
  selected: boolean;
}

interface DashboardApiKeysModel extends DashboardPaging {
  frame: DashboardFrame;
  canManage: boolean;
  keys: { id: string; prefix: string; created: string; lastUsed: string; revoked?: string | undefined }[];
  /** The key just created: shown once, in [data-api-key]. */
  createdKey?: string | undefined;
  createdKeyId?: string | undefined;
  error?: string | undefined;
  notice?: string | undefined;
}

interface DashboardEndpointView {
  id: string;
  url: string;
  description: string;
  events: string;
  status: string;
  statusText: string;
  disabledReason: string;
  created: string;
}

interface DashboardWebhooksModel extends DashboardPaging {
  frame: DashboardFrame;
  canManage: boolean;
  endpoints: DashboardEndpointView[];
  secret?: string | undefined;
  url: string;
  description: string;
  enabledEvents: string;
  error?: string | undefined;
}

interface DashboardWebhookEndpointModel extends DashboardPaging {
  frame: DashboardFrame;
  canManage: boolean;
  canRedeliver: boolean;
  endpoint: DashboardEndpointView;
  path: string;
  /** A new signing secret (created or rotated): shown once, in [data-webhook-secret]. */
  secret?: string | undefined;
  filters: { status: string; eventId: string };
  statuses: DashboardOption[];
  deliveries: {
    id: string;
    eventId: string;
    eventType: string;
    status: string;
    statusText: string;
    created: string;
    next: string;
    attempts: { number: number; at: string; outcome: string; statusCode: string; duration: string; error: string; excerpt: string }[];
  }[];
  error?: string | undefined;
  notice?: string | undefined;
}

interface DashboardEventsModel extends DashboardPaging {
  frame: DashboardFrame;
  canRedeliver: boolean;
  types: { value: string; selected: boolean }[];
  /** `json`: the event as webhooks send it, indented; escaped into a <pre>. */
  events: { id: string; type: string; created: string; json: string }[];
  error?: string | undefined;
  notice?: string | undefined;
}

interface DashboardRefundsModel extends DashboardPaging {
  frame: DashboardFrame;
  filters: { chargeId: string; subscriptionId: string };
  refunds: {
    id: string;
    created: string;
    amount: string;
    assetAmount: string;
    status: string;
    statusText: string;
    chargeId: string;
    subscriptionId: string;
    reason: string;
  }[];
  error?: string | undefined;
}

interface DashboardBalanceModel extends DashboardPaging {
  frame: DashboardFrame;
  balances: { asset: string; available: string; pending: string }[];
  filters: { createdAfter: string };
  assets: DashboardOption[];
  types: DashboardOption[];
  transactions: { id: string; created: string; type: string; typeText: string; amount: string; balanceAfter: string; source: string }[];
  error?: string | undefined;
}

interface DashboardPayoutsModel extends DashboardPaging {
  frame: DashboardFrame;
  canManage: boolean;
  canActivateNow: boolean;
  destinations: { id: string; asset: string; network: string; address: string; label: string; status: string; statusText: string; activatesAt: string }[];
  /** ACTIVE destinations, for the create-payout select. */
  payable: { id: string; label: string; selected: boolean }[];
  assets: { value: string; selected: boolean }[];
  statuses: DashboardOption[];
  payouts: {
    id: string;
    created: string;
    amount: string;
    fee: string;
    status: string;
    statusText: string;
    to: string;
    txHash: string;
    failure: string;
    cancellable: boolean;
  }[];
  address: string;
  label: string;
  amount: string;
  /** Made when the form is shown: a double submit creates one payout. */
  idempotencyKey: string;
  error?: string | undefined;
  notice?: string | undefined;
}

interface DashboardAuditLogModel {
  frame: DashboardFrame;
  filters: { actor: string; action: string; objectId: string; from: string; to: string };
  errors: string[];
  entries: (AuditEntryRecord & { atText: string; actorText: string; objectUrl?: string | undefined })[];
  olderUrl?: string | undefined;
  newestUrl?: string | undefined;
}

interface DashboardExportsModel {
  frame: DashboardFrame;
  canExport: boolean;
  from: string;
  to: string;
  errors: string[];
}

/** The customer's receipt page (/receipts/<token>): no form, printable. */
export interface ReceiptModel {
  merchantName: string;
  receiptNumber: string;
  /** The amount paid, in the plan's currency, as the headline. */
  amount: string;
  /** Date, plan and period, subtotal, discount, amount, asset amount, rate and its time, ledger transaction. */
  lines: { label: string; value: string }[];
  refunds: { date: string; amount: string; assetAmount: string }[];
  /** `{receiptUrl}.pdf`, relative. */
  pdfUrl: string;
}

/** A page with only a heading and a sentence (expired link, stale form, failure). */
interface StatusModel {
  title: string;
  message: string;
}

/** What an approval page shows above its form. */
export interface SummaryModel {
  merchantName: string;
  title: string;
  price: string;
  lines: { label: string; value: string }[];
  note?: string | undefined;
  expires: string;
}

/** A form on the page: where it posts and its CSRF token. */
interface FormModel {
  action: string;
  csrf: string;
}

interface ApprovalLoginModel extends FormModel {
  summary: SummaryModel;
  error?: string | undefined;
  email: string;
  /** "Cancel and return to Acme Streaming". */
  cancelLabel: string;
}

/** One account that may pay, as a radio of `fundingAsset`. */
export interface AssetChoiceModel {
  asset: string;
  name: string;
  network: string;
  /** "Balance: 50.00 USDT_TRON". */
  balance: string;
  /** "10.50 USDT_TRON", "Due now: 7.50 USDT_TRON", "10.50 USDT_TRON per charge". */
  due: string;
  checked: boolean;
  /** Cannot be chosen (frozen, or its balance cannot pay what is due now); `note` says why. */
  disabled: boolean;
  /** Why it cannot be chosen, or what to know before choosing it. */
  note?: string | undefined;
  /** Unique in the page, for the note's id. */
  key: string;
}

/** A fallback select (fallback-choice.ts): name fallbackAsset1 | fallbackAsset2, "" = none. */
export interface FallbackSelectModel {
  name: string;
  /** Unique in the page (the label's `for`). */
  id: string;
  label: string;
  options: { value: string; label: string; selected: boolean }[];
}

interface ApprovalFundingModel extends FormModel {
  summary: SummaryModel;
  notice?: string | undefined;
  error?: string | undefined;
  email?: string | undefined;
  /** "Pay with", or "Paid from" when the paying account is fixed. */
  legend: string;
  choices: AssetChoiceModel[];
  /** Why nothing can be approved now (no account can pay); the approve button is left out. */
  blocked?: string | undefined;
  /** The funding fallback selects (subscription approvals), inside the approval form. */
  fallbacks?: FallbackSelectModel[] | undefined;
  approveLabel: string;
  cancelLabel: string;
}

interface SelfServiceLoginModel extends FormModel {
  error?: string | undefined;
  email: string;
}

interface SelfServiceModel extends FormModel {
  email?: string | undefined;
  notice?: string | undefined;
  /** An error about no card in the list. */
  error?: string | undefined;
  cards: SubscriptionCardModel[];
  moreUrl?: string | undefined;
}

export interface SubscriptionCardModel {
  id: string;
  /** The status code, for automation (`section[data-status]`); people read `statusText`. */
  status: string;
  statusText: string;
  tone: "live" | "warn" | "ended";
  live: boolean;
  merchantName: string;
  planName: string;
  price: string;
  lines: { label: string; value: string }[];
  charges: ChargeRowModel[];
  error?: string | undefined;
  /** Live subscriptions: the accounts that may pay later charges. */
  choices: AssetChoiceModel[];
  /** Live subscriptions: the funding fallback selects (change-funding-fallback). */
  fallbacks: FallbackSelectModel[];
  /** The next charge is at risk: the sentence, with the shortfall (`[data-at-risk]`). */
  atRisk?: string | undefined;
}

export interface ChargeRowModel {
  status: string;
  date: string;
  amount: string;
  paid: string;
  statusText: string;
  refunded: string;
  /** The charge's receipt page (paid charges above 0). */
  receiptUrl?: string | undefined;
}
