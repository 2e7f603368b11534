import { Router } from "@koa/router";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { CustomerSubscription, SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import { ASSET_AMOUNT_TOO_LARGE } from "../../services/subscriptions/contract.ts";
import type { CustomerAuth } from "./customer-auth.ts";
import { formBody, redirect, securityHeaders, type Ctx, type Form, type PageResponder } from "./page-http.ts";
import type { PageSession, SessionCodec } from "./page-session.ts";
import { subscriptionStatusText, tooLargeSentence } from "./page-text.ts";
import { cardModel } from "./self-service-models.ts";
import { postedFallbacks } from "./fallback-choice.ts";

const SELF_SERVICE_PATH = "/wallet/subscriptions";
/** The session is bound to this page as approval sessions are bound to their token (page-session.ts). */
const SESSION_SCOPE = "wallet-subscriptions";
const PAGE_SIZE = 50;
const ASSET_CODE = /^[A-Z0-9_]{1,16}$/;

interface SelfServicePagesOptions {
  subscriptions: Client<typeof SubscriptionsService>;
  sessions: SessionCodec;
  auth: CustomerAuth;
  pages: PageResponder;
}

interface Screen {
  status?: number;
  error?: string;
  errorFor?: string;
  done?: { notice: (about: CustomerSubscription | undefined) => string; subscriptionId: string };
  selected?: { subscriptionId: string; asset: string };
  fallbacks?: { subscriptionId: string; assets: string[] };
  email?: string;
  cursor?: string;
}

/** Looked up by `?done=` from the URL: a Map, so `constructor` or `__proto__` finds nothing rather than Object.prototype. */
const NOTICES = new Map<string, (item: CustomerSubscription | undefined) => string>([
  ["cancelled", (s) => `${describe(s)} is cancelled. Nothing more will be charged.`],
  ["funding-asset-changed", (s) => `${describe(s)} is now paid with ${s?.subscription?.fundingAsset ?? "the asset you chose"}.`],
  [
    "funding-asset-changed-retried",
    (s) =>
      `${describe(s)} is now paid with ${s?.subscription?.fundingAsset ?? "the asset you chose"}. The overdue charge was retried: ${retryOutcome(s?.subscription?.status)}`,
  ],
  [
    "funding-fallback-changed",
    (s) => {
      const assets = s?.subscription?.fallbackAssets ?? [];
      return assets.length
        ? `${describe(s)} now falls back to ${assets.join(", then ")} when ${s?.subscription?.fundingAsset ?? "its asset"} cannot pay.`
        : `${describe(s)} has no fallback now.`;
    },
  ],
]);
const describe = (s: CustomerSubscription | undefined) => (s ? `Your subscription to ${s.plan?.name} with ${s.merchantName}` : "The subscription");
const retryOutcome = (status: string | undefined) =>
  status === "ACTIVE"
    ? "it was paid."
    : status
      ? `the subscription's status is now ${subscriptionStatusText(status).toLowerCase()}.`
      : "the status is updated.";

/**
 * The customer's own page: every subscription of the wallet user across
 * merchants, with a PIN-confirmed cancel and funding-asset change. The
 * approval pages' pieces: the same login and PIN check (customer-auth.ts),
 * signed path-scoped session cookie, CSRF token on every form, security
 * headers, templates and error pages. The wallet user id comes only from the
 * session: a subscription id of someone else in the form gets the same answer
 * as an unknown one, from the service.
 */
export function selfServicePages(options: SelfServicePagesOptions): Router {
  const { subscriptions, sessions, auth, pages } = options;
  const router = new Router();
  const path = SELF_SERVICE_PATH;

  async function render(ctx: Ctx, session: PageSession, screen: Screen = {}) {
    if (!session.uid) {
      return pages.page(ctx, screen.status ?? 200, "self-service-login", { action: path, csrf: session.csrf, error: screen.error, email: screen.email ?? "" });
    }
    const list = (cursor?: string) => subscriptions.listCustomerSubscriptions({ walletUserId: session.uid, limit: PAGE_SIZE, cursor });
    let page;
    try {
      page = await list(screen.cursor);
    } catch (err) {
      // A cursor that is not one of ours (edited by hand) shows the first page.
      if (!(screen.cursor && err instanceof ConnectError && err.code === Code.InvalidArgument)) throw err;
      page = await list();
    }
    const about = screen.done ? page.subscriptions.find((s) => s.subscription?.id === screen.done!.subscriptionId) : undefined;
    const inCard = screen.error !== undefined && page.subscriptions.some((s) => s.subscription?.id === screen.errorFor);
    pages.page(ctx, screen.status ?? 200, "self-service", {
      action: path,
      csrf: session.csrf,
      email: session.email,
      cards: page.subscriptions.map((s) => cardModel(s, screen)),
      moreUrl: page.hasMore && page.nextCursor ? `${path}?cursor=${encodeURIComponent(page.nextCursor)}` : undefined,
      notice: screen.done?.notice(about),
      // An error about a subscription shows in its card; any other at the top.
      error: inCard ? undefined : screen.error,
    });
  }

  router.get(path, async (ctx) => {
    const c = ctx as unknown as Ctx;
    await pages.guarded(c, async () => {
      securityHeaders(c, []);
      const session = sessions.read(c, SESSION_SCOPE) ?? sessions.issue(c, SESSION_SCOPE, path);
      const query = c.query as Record<string, string | string[] | undefined>;
      const cursor = typeof query.cursor === "string" && query.cursor.length <= 500 ? query.cursor : undefined;
      // After a change (POST → 303 → here) the page says it is done; the words come from the customer's own list, only the id from the URL.
      const notice = typeof query.done === "string" ? NOTICES.get(query.done) : undefined;
      const subscriptionId = typeof query.subscriptionId === "string" ? query.subscriptionId : "";
      return render(c, session, { ...(cursor && { cursor }), ...(notice && { done: { notice, subscriptionId } }) });
    });
  });

  router.post(path, async (ctx) => {
    const c = ctx as unknown as Ctx;
    await pages.guarded(c, async () => {
      securityHeaders(c, []);
      const form = formBody(c);
      const session = auth.postedSession(c, SESSION_SCOPE, form);
      if (!session) return pages.staleForm(c);
      const action = form.action ?? (session.uid ? "" : "login");
      switch (action) {
        case "login":
          return login(c, session, form);
        case "logout":
          sessions.issue(c, SESSION_SCOPE, path);
          return redirect(c, path);
        case "cancel-subscription":
        case "change-funding-asset":
        case "change-funding-fallback":
          return change(c, session, form, action);
        default:
          return render(c, session, { status: 400, error: "Choose what to do: cancel a subscription, change how it is paid or its fallbacks." });
      }
    });
  });

  async function login(ctx: Ctx, session: PageSession, form: Form) {
    const outcome = await auth.logIn(ctx, form);
    if (!outcome.ok) return render(ctx, session, { status: outcome.status, error: outcome.error, email: outcome.email });
    // A new session (and CSRF token) at the privilege change.
    sessions.issue(ctx, SESSION_SCOPE, path, { uid: outcome.userId, email: outcome.email });
    return redirect(ctx, path);
  }

  async function change(ctx: Ctx, session: PageSession, form: Form, action: "cancel-subscription" | "change-funding-asset" | "change-funding-fallback") {
    if (!session.uid) return render(ctx, session, { status: 401, error: "Log in first." });
    const subscriptionId = form.subscriptionId ?? "";
    const asset = form.fundingAsset ?? "";
    const fallbacks = postedFallbacks(form);
    const kept = fallbacks.assets;
    const screen = (status: number, error: string) =>
      render(ctx, session, {
        status,
        error,
        errorFor: subscriptionId,
        ...(asset && { selected: { subscriptionId, asset } }),
        ...(action === "change-funding-fallback" && { fallbacks: { subscriptionId, assets: kept } }),
      });
    if (!subscriptionId) return screen(422, "Choose a subscription.");
    if (action === "change-funding-fallback" && fallbacks.error) return screen(422, fallbacks.error);
    // Anything but an asset code is a hand-made form: the same answer as no choice (the service would call it a bad request, a 500 here).
    if (action === "change-funding-asset" && !ASSET_CODE.test(asset)) return screen(422, "Choose the asset to pay with.");
    const refused = await auth.checkPin(session.uid, form.pin ?? "", "Nothing can be changed while it is locked.");
    if (refused) return screen(refused.status, refused.error);
    try {
      if (action === "cancel-subscription") {
        await subscriptions.cancelSubscriptionForCustomer({ walletUserId: session.uid, subscriptionId });
        return redirect(ctx, `${path}?done=cancelled&subscriptionId=${encodeURIComponent(subscriptionId)}`);
      }
      if (action === "change-funding-fallback") {
        await subscriptions.setFundingFallback({ walletUserId: session.uid, subscriptionId, assets: kept });
        return redirect(ctx, `${path}?done=funding-fallback-changed&subscriptionId=${encodeURIComponent(subscriptionId)}`);
      }
      const res = await subscriptions.changeFundingAsset({ walletUserId: session.uid, subscriptionId, asset });
      const done = res.retried ? "funding-asset-changed-retried" : "funding-asset-changed";
      return redirect(ctx, `${path}?done=${done}&subscriptionId=${encodeURIComponent(subscriptionId)}`);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      if (errorCodeOf(err) === ASSET_AMOUNT_TOO_LARGE) return screen(422, tooLargeSentence(asset));
      const message = REFUSALS.get(errorCodeOf(err) ?? "");
      if (!message) throw err;
      return screen(message[0], message[1]);
    }
  }

  return router;
}

/** Service refusals the customer can act on (by domain code); anything else is the generic error page. */
const REFUSALS = new Map<string, [number, string]>([
  // Another customer's subscription reads exactly like a missing one.
  ["SUBSCRIPTION_NOT_FOUND", [404, "This subscription was not found in your wallet."]],
  ["INVALID_STATUS_TRANSITION", [409, "This subscription has already ended."]],
  ["SUBSCRIPTION_NOT_CHANGEABLE", [409, "The funding asset of this subscription cannot be changed in its current status."]],
  ["SUBSCRIPTION_CHANGED", [409, "This subscription changed meanwhile. Check it and try again."]],
  ["PAYMENT_IN_PROGRESS", [409, "A payment for this subscription is being processed. Try again in a moment."]],
  ["FUNDING_ASSET_NOT_SUPPORTED", [422, "This asset cannot pay for this subscription. Choose another one."]],
  // SetFundingFallback's own 400 once the page's checks passed: a fallback that is the asset paying now.
  ["INVALID_REQUEST", [422, "A fallback must be another asset than the one that pays, and the two must differ."]],
  ["ACCOUNT_FROZEN", [422, "This account is frozen. Choose another asset."]],
  ["PIN_LOCKED", [423, "Your PIN is locked after too many wrong tries."]],
]);
