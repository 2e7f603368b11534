import { Router } from "@koa/router";
import { ConnectError } from "@connectrpc/connect";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import { ASSET_AMOUNT_TOO_LARGE } from "../../services/subscriptions/contract.ts";
import type { ApprovalProvider, ApprovalView } from "./approval-provider.ts";
import { choiceModels, summaryModel } from "./approval-models.ts";
import type { CustomerAuth } from "./customer-auth.ts";
import { formBody, redirect, securityHeaders, type Ctx, type Form, type PageResponder } from "./page-http.ts";
import { safeEqual, type PageSession, type SessionCodec } from "./page-session.ts";
import { tooLargeSentence } from "./page-text.ts";
import { fallbackSelects, postedFallbacks } from "./fallback-choice.ts";

interface ApprovalPagesOptions {
  /** Where the pages live: `${basePath}/<token>`. */
  basePath: string;
  provider: ApprovalProvider;
  sessions: SessionCodec;
  auth: CustomerAuth;
  pages: PageResponder;
}

interface Screen {
  status?: number;
  error?: string;
  notice?: string;
  selected?: string;
  fallbacks?: string[];
  email?: string;
}

/**
 * The hosted approval flow, generic over what is approved (the provider):
 * GET shows the current step; every step is a form POST to the same URL with
 * `action` = login | approve | cancel | logout, answered with a redirect
 * (POST → 303 → GET) or the same step again with a message.
 *
 * Security: the session is a signed HttpOnly SameSite=Lax cookie scoped to
 * the page's path; every form carries a CSRF token compared timing-safely;
 * the login (customer-auth.ts, shared with the self-service page) must be the
 * wallet user the approval names; the PIN is checked by the wallet (which
 * counts wrong tries and locks after 5) before every approval; redirects go
 * only to URLs the provider stored. Failures render a page, never a stack trace.
 */
export function approvalPages(options: ApprovalPagesOptions): Router {
  const { basePath, provider, sessions, auth, pages } = options;
  const router = new Router();
  const pathOf = (token: string) => `${basePath}/${encodeURIComponent(token)}`;

  async function render(ctx: Ctx, token: string, view: ApprovalView, session: PageSession, screen: Screen = {}) {
    const common = {
      summary: summaryModel(view),
      action: pathOf(token),
      csrf: session.csrf,
      error: screen.error,
      cancelLabel: `Cancel and return to ${view.summary.merchantName}`,
    };
    if (!session.uid) return pages.page(ctx, screen.status ?? 200, "approval-login", { ...common, email: screen.email ?? "" });
    const funding = await provider.fundingChoices(token, session.uid);
    const choices = choiceModels(view, funding, screen.selected);
    const blocked =
      choices.length === 0
        ? "Your wallet has no account that can pay this. Add funds to your wallet, then come back to this page."
        : choices.every((c) => c.disabled)
          ? "None of your accounts can pay this now. Add funds to your wallet, then reload this page."
          : undefined;
    // Fallbacks: the accounts that can pay the plan and are not frozen; the one chosen to pay is refused in words (postedFallbacks).
    const fallbackOptions = funding.filter((c) => !c.frozen);
    const fallbacks =
      view.offersFallback === true && fallbackOptions.length > 1 ? fallbackSelects(fallbackOptions, screen.fallbacks ?? [], "approval") : undefined;
    pages.page(ctx, screen.status ?? 200, "approval-funding", {
      ...common,
      choices,
      blocked,
      fallbacks,
      legend: view.fixedFunding === true ? "Paid from" : "Pay with",
      approveLabel: view.summary.approveLabel,
      notice: screen.notice,
      email: session.email,
    });
  }

  /** Loads the approval; answers the page itself (and returns undefined) when it cannot be acted on. */
  async function loadPending(ctx: Ctx, token: string): Promise<ApprovalView | undefined> {
    const view = await provider.load(token);
    if (!view) {
      pages.statusPage(
        ctx,
        404,
        "Link not found",
        "This authorization link is not valid. Check that you opened the whole link, or ask the merchant for a new one.",
      );
      return undefined;
    }
    securityHeaders(ctx, view.redirectOrigins);
    if (view.state === "PENDING") return view;
    if (view.state === "EXPIRED") {
      pages.statusPage(
        ctx,
        410,
        "This link has expired",
        `The time to approve this with ${view.summary.merchantName} has run out. Ask the merchant for a new link.`,
      );
    } else if (view.state === "CANCELLED") {
      pages.statusPage(ctx, 410, "No longer available", `${view.summary.merchantName} has cancelled this request. Nothing was charged.`);
    } else {
      pages.statusPage(ctx, 410, "This link has already been used", "This authorization has already been answered. You can close this page.");
    }
    return undefined;
  }

  router.get(`${basePath}/:token`, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const token = c.params.token!;
    await pages.guarded(c, async () => {
      const view = await loadPending(c, token);
      if (!view) return;
      const session = sessions.read(c, token) ?? sessions.issue(c, token, pathOf(token));
      await render(c, token, view, session);
    });
  });

  router.post(`${basePath}/:token`, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const token = c.params.token!;
    await pages.guarded(c, async () => {
      const view = await loadPending(c, token);
      if (!view) return;
      const form = formBody(c);
      const session = auth.postedSession(c, token, form);
      if (!session) return pages.staleForm(c);
      // A submit without a button (script form.submit(), some automation) means the step's default button,
      // as the browser's implicit submission (Enter in a field) does: log in, or approve once logged in.
      const action = form.action ?? (session.uid ? "approve" : "login");
      try {
        switch (action) {
          case "login":
            return await login(c, token, view, session, form);
          case "approve":
            return await approve(c, token, view, session, form);
          case "cancel": {
            const { redirectUrl } = await provider.decline(token);
            sessions.clear(c, pathOf(token));
            return redirect(c, redirectUrl);
          }
          case "logout":
            sessions.issue(c, token, pathOf(token));
            return redirect(c, pathOf(token));
          default:
            return await render(c, token, view, session, { status: 400, error: "Unknown action." });
        }
      } catch (err) {
        const code = err instanceof ConnectError ? errorCodeOf(err) : undefined;
        if (code === "PAYMENT_IN_PROGRESS")
          return await render(c, token, view, session, { status: 409, notice: err instanceof ConnectError ? err.rawMessage : "" });
        if (code === "PIN_LOCKED")
          return await render(c, token, view, session, {
            status: 423,
            error: "Your PIN is locked after too many wrong tries. Approval is not possible until it unlocks.",
          });
        if (code === "FUNDING_ASSET_NOT_SUPPORTED")
          return await render(c, token, view, session, { status: 422, error: "This asset cannot pay for it. Choose another one." });
        if (code === ASSET_AMOUNT_TOO_LARGE) return await render(c, token, view, session, { status: 422, error: tooLargeSentence(form.fundingAsset ?? "") });
        if (code === "AUTHORIZATION_EXPIRED" || code === "AUTHORIZATION_USED" || code === "AUTHORIZATION_CANCELLED") {
          // The state changed while the customer was on the page: show the page for the new state.
          await loadPending(c, token);
          return;
        }
        throw err;
      }
    });
  });

  async function login(ctx: Ctx, token: string, view: ApprovalView, session: PageSession, form: Form) {
    const outcome = await auth.logIn(ctx, form);
    if (!outcome.ok) return render(ctx, token, view, session, { status: outcome.status, error: outcome.error, email: outcome.email });
    if (!safeEqual(outcome.userId, view.walletUserId)) {
      return render(ctx, token, view, session, {
        status: 403,
        error: "This request was made for a different wallet account. Log in with the account the merchant named.",
        email: outcome.email,
      });
    }
    // A new session (and CSRF token) at the privilege change.
    sessions.issue(ctx, token, pathOf(token), { uid: outcome.userId, email: outcome.email });
    return redirect(ctx, pathOf(token));
  }

  async function approve(ctx: Ctx, token: string, view: ApprovalView, session: PageSession, form: Form) {
    if (!session.uid) return render(ctx, token, view, session, { status: 401, error: "Log in first." });
    const asset = form.fundingAsset ?? "";
    const fallbacks: { assets: string[]; error?: string } = view.offersFallback === true ? postedFallbacks(form, asset) : { assets: [] };
    const kept = fallbacks.assets;
    const screen = (status: number, error: string) => render(ctx, token, view, session, { status, error, fallbacks: kept, ...(asset && { selected: asset }) });
    if (!asset) return screen(422, "Choose the asset to pay with.");
    if (fallbacks.error) return screen(422, fallbacks.error);
    const refused = await auth.checkPin(session.uid, form.pin ?? "", "Approval is not possible while it is locked.");
    if (refused) return screen(refused.status, refused.error);
    const result = await provider.approve(token, session.uid, asset, kept);
    if (!result.approved) return screen(402, result.message);
    sessions.clear(ctx, pathOf(token));
    return redirect(ctx, result.redirectUrl);
  }

  return router;
}
