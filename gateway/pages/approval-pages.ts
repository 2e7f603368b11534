import { Router } from "@koa/router";
import type { ParameterizedContext } from "koa";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Logger } from "../../services/platform/logger.ts";
import { errorCodeOf } from "../../services/platform/rpc/errors.ts";
import { fromConnectError } from "../http-errors.ts";
import type { ApprovalProvider, ApprovalView } from "./approval-provider.ts";
import type { LoginLimiter } from "./login-limiter.ts";
import { safeEqual, type PageSession, type SessionCodec } from "./page-session.ts";
import { formatUtc, fundingPage, loginPage, statusPage, tooLargeSentence } from "./templates.ts";
import { ASSET_AMOUNT_TOO_LARGE } from "../../services/subscriptions/contract.ts";

export interface ApprovalPagesOptions {
  /** Where the pages live: `${basePath}/<token>`. */
  basePath: string;
  provider: ApprovalProvider;
  wallet: Client<typeof WalletService>;
  sessions: SessionCodec;
  limiter: LoginLimiter;
  logger: Logger;
}

export type Ctx = ParameterizedContext & { params: Record<string, string> };

interface Screen {
  status?: number;
  error?: string;
  notice?: string;
  selected?: string;
  email?: string;
}

export const PIN = /^\d{6}$/;

/**
 * The hosted approval flow, generic over what is approved (the provider):
 * GET shows the current step; every step is a form POST to the same URL with
 * `action` = login | approve | cancel | logout, answered with a redirect
 * (POST → 303 → GET) or the same step again with a message.
 *
 * Security: the session is a signed HttpOnly SameSite=Lax cookie scoped to
 * the page's path; every form carries a CSRF token compared timing-safely;
 * the login must be the wallet user the approval names; the PIN is checked
 * by the wallet (which counts wrong tries and locks after 5) before every
 * approval; failed logins are limited per email (wallet) and per client
 * (here); redirects go only to URLs the provider stored. Failures render a
 * page, never a stack trace.
 */
export function approvalPages(options: ApprovalPagesOptions): Router {
  const { basePath, provider, wallet, sessions, limiter, logger } = options;
  const router = new Router();
  const pathOf = (token: string) => `${basePath}/${encodeURIComponent(token)}`;

  async function render(ctx: Ctx, token: string, view: ApprovalView, session: PageSession, screen: Screen = {}) {
    const common = { view, action: pathOf(token), csrf: session.csrf, ...(screen.error !== undefined && { error: screen.error }) };
    if (!session.uid) {
      return send(ctx, screen.status ?? 200, loginPage({ ...common, ...(screen.email !== undefined && { email: screen.email }) }));
    }
    const choices = await provider.fundingChoices(token, session.uid);
    send(
      ctx,
      screen.status ?? 200,
      fundingPage({
        ...common,
        choices,
        ...(screen.selected !== undefined && { selected: screen.selected }),
        ...(screen.notice !== undefined && { notice: screen.notice }),
        ...(session.email !== undefined && { email: session.email }),
      }),
    );
  }

  /** Loads the approval; answers the page itself (and returns undefined) when it cannot be acted on. */
  async function loadPending(ctx: Ctx, token: string): Promise<ApprovalView | undefined> {
    const view = await provider.load(token);
    if (!view) {
      send(ctx, 404, statusPage("Link not found", "This authorization link is not valid. Check that you opened the whole link, or ask the merchant for a new one."));
      return undefined;
    }
    securityHeaders(ctx, view.redirectOrigins);
    if (view.state === "PENDING") return view;
    if (view.state === "EXPIRED") {
      send(ctx, 410, statusPage("This link has expired", `The time to approve this with ${view.summary.merchantName} has run out. Ask the merchant for a new link.`));
    } else if (view.state === "CANCELLED") {
      send(ctx, 410, statusPage("No longer available", `${view.summary.merchantName} has cancelled this request. Nothing was charged.`));
    } else {
      send(ctx, 410, statusPage("This link has already been used", "This authorization has already been answered. You can close this page."));
    }
    return undefined;
  }

  router.get(`${basePath}/:token`, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const token = c.params.token!;
    await guarded(c, logger, async () => {
      const view = await loadPending(c, token);
      if (!view) return;
      const session = sessions.read(c, token) ?? sessions.issue(c, token, pathOf(token));
      await render(c, token, view, session);
    });
  });

  router.post(`${basePath}/:token`, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const token = c.params.token!;
    await guarded(c, logger, async () => {
      const view = await loadPending(c, token);
      if (!view) return;
      const form = formBody(c);
      const session = sessions.read(c, token);
      if (!session || !safeEqual(form.csrf ?? "", session.csrf)) {
        send(c, 403, statusPage("Please reload the page", "Your session on this page has expired or the form is stale. Reload the page and try again."));
        return;
      }
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
        if (code === "PAYMENT_IN_PROGRESS") return await render(c, token, view, session, { status: 409, notice: err instanceof ConnectError ? err.rawMessage : "" });
        if (code === "PIN_LOCKED") return await render(c, token, view, session, { status: 423, error: "Your PIN is locked after too many wrong tries. Approval is not possible until it unlocks." });
        if (code === "FUNDING_ASSET_NOT_SUPPORTED") return await render(c, token, view, session, { status: 422, error: "This asset cannot pay for it. Choose another one." });
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

  async function login(ctx: Ctx, token: string, view: ApprovalView, session: PageSession, form: Record<string, string | undefined>) {
    const email = (form.email ?? "").trim();
    const password = form.password ?? "";
    if (!email || !password) return render(ctx, token, view, session, { status: 422, error: "Enter your email and password.", email });
    if (await limiter.blocked(ctx.ip)) {
      return render(ctx, token, view, session, { status: 429, error: "Too many failed logins from this device. Try again in 15 minutes.", email });
    }
    let userId: string;
    try {
      const { user } = await wallet.verifyPassword({ email, password });
      userId = user!.id;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.ResourceExhausted) {
        return render(ctx, token, view, session, { status: 429, error: "Too many failed logins for this account. Try again later.", email });
      }
      if (err instanceof ConnectError && (err.code === Code.Unauthenticated || err.code === Code.InvalidArgument)) {
        await limiter.failed(ctx.ip);
        return render(ctx, token, view, session, { status: 401, error: "The email or password is incorrect.", email });
      }
      throw err;
    }
    if (!safeEqual(userId, view.walletUserId)) {
      return render(ctx, token, view, session, {
        status: 403,
        error: "This request was made for a different wallet account. Log in with the account the merchant named.",
        email,
      });
    }
    // A new session (and CSRF token) at the privilege change.
    sessions.issue(ctx, token, pathOf(token), { uid: userId, email });
    return redirect(ctx, pathOf(token));
  }

  async function approve(ctx: Ctx, token: string, view: ApprovalView, session: PageSession, form: Record<string, string | undefined>) {
    if (!session.uid) return render(ctx, token, view, session, { status: 401, error: "Log in first." });
    const asset = form.fundingAsset ?? "";
    const screen = (status: number, error: string) => render(ctx, token, view, session, { status, error, ...(asset && { selected: asset }) });
    if (!asset) return screen(422, "Choose the asset to pay with.");
    const pin = form.pin ?? "";
    if (!PIN.test(pin)) return screen(422, "Your payment PIN is six digits.");
    const check = await wallet.verifyPin({ walletUserId: session.uid, pin });
    if (check.locked) {
      const until = check.lockedUntil ? ` until ${formatUtc(timestampDate(check.lockedUntil))}` : "";
      return screen(423, `Too many wrong PINs: your PIN is locked${until}. Approval is not possible while it is locked.`);
    }
    if (!check.ok) {
      const left = check.attemptsLeft;
      return screen(401, `Wrong PIN. ${left} ${left === 1 ? "attempt" : "attempts"} left before your PIN is locked.`);
    }
    const result = await provider.approve(token, session.uid, asset);
    if (!result.approved) return screen(402, result.message);
    sessions.clear(ctx, pathOf(token));
    return redirect(ctx, result.redirectUrl);
  }

  return router;
}

export function formBody(ctx: Ctx): Record<string, string | undefined> {
  const body = (ctx.request as { body?: unknown }).body;
  if (!body || typeof body !== "object") return {};
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    // A repeated field arrives as an array: take the first value.
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === "string") out[k] = first;
  }
  return out;
}

export function send(ctx: Ctx, status: number, html: string): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = html;
}

export function redirect(ctx: Ctx, url: string): void {
  ctx.redirect(url);
  ctx.status = 303;
}

/** No caching, no framing, no referrer (the URL holds the token), no scripts at all. */
export function securityHeaders(ctx: Ctx, redirectOrigins: string[]): void {
  ctx.set("Cache-Control", "no-store");
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self' ${redirectOrigins.join(" ")}; frame-ancestors 'none'; base-uri 'none'`,
  );
}

/** Any failure becomes a page: logged whole, shown without details. */
export async function guarded(ctx: Ctx, logger: Logger, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    // The API's own reading of an RPC failure: a broken connection to a service is "try again" here too.
    const status = err instanceof ConnectError ? fromConnectError(err).status : 500;
    const unavailable = status === 503 || status === 504;
    logger.error({ err, path: ctx.path.replace(/[^/]+$/, "<token>") }, "hosted page failed");
    ctx.set("Cache-Control", "no-store");
    send(ctx, unavailable ? 503 : 500, statusPage("Something went wrong", "We could not complete this step. Please try again in a moment."));
  }
}
