import { Router } from "@koa/router";
import { Code, ConnectError } from "@connectrpc/connect";
import QRCode from "qrcode";
import { errorCodeOf } from "../../../services/platform/rpc/error-code.ts";
import { MIN_PASSWORD_LENGTH } from "../../../services/merchants/members/contract.ts";
import { formBody, redirect, securityHeaders, type Ctx, type Form } from "../page-http.ts";
import { safeEqual } from "../page-session.ts";
import type { DashboardSession } from "./session-store.ts";
import { limiterKeyOf, type DashboardDeps } from "./member-gate.ts";
import { DASHBOARD, ENROL_PATH, INVITE_PATH, LOGIN_PATH } from "./paths.ts";
import { roleText } from "./words.ts";

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Getting in: the invite (password), TOTP enrolment (mandatory, recovery
 * codes shown once), the two-step login and logout. Each step's session is
 * a new one (session-store.ts); failures of the password or the code count
 * per client address and per email (the hosted pages' limiter).
 */
export function signInPages(deps: DashboardDeps): Router {
  const { members, sessions, pages, limits } = deps;
  const router = new Router();

  /** Runs a sign-in step with headers, failure pages and the session (an anonymous one is made for GETs). */
  const step = (posted: boolean, fn: (ctx: Ctx, session: DashboardSession, form: Form) => Promise<void>) => async (ctx: unknown) => {
    const c = ctx as Ctx;
    await pages.guarded(c, async () => {
      securityHeaders(c, []);
      let session = await sessions.read(c);
      const form = posted ? formBody(c) : {};
      if (posted && (!session || !safeEqual(form.csrf ?? "", session.csrf))) return pages.staleForm(c);
      session ??= await sessions.start(c, { stage: "anonymous" });
      await fn(c, session, form);
    });
  };

  const loginPage = (ctx: Ctx, session: DashboardSession, status = 200, error?: string, email = "") =>
    pages.page(ctx, status, "dashboard/sign-in", {
      action: LOGIN_PATH,
      csrf: session.csrf,
      step: session.stage === "password" ? "code" : "password",
      email: session.stage === "password" ? (session.email ?? "") : email,
      error,
    });

  router.get(
    LOGIN_PATH,
    step(false, async (ctx, session) => {
      if (session.stage === "active") return redirect(ctx, DASHBOARD);
      if (session.stage === "enrol") return redirect(ctx, ENROL_PATH);
      loginPage(ctx, session);
    }),
  );

  router.post(
    LOGIN_PATH,
    step(true, async (ctx, session, form) => {
      switch (form.action) {
        case "login":
          return passwordStep(ctx, session, form);
        case "verify":
          return codeStep(ctx, session, form);
        case "restart":
          await sessions.start(ctx, { stage: "anonymous" });
          return redirect(ctx, LOGIN_PATH);
        default:
          return loginPage(ctx, session, 400, "Enter your email and password and choose Log in.");
      }
    }),
  );

  async function tooMany(ctx: Ctx, email: string): Promise<boolean> {
    return (await limits.client.blocked(ctx.ip)) || (email !== "" && (await limits.email.blocked(limiterKeyOf(email))));
  }
  async function failed(ctx: Ctx, email: string): Promise<void> {
    await Promise.all([limits.client.failed(ctx.ip), limits.email.failed(limiterKeyOf(email))]);
  }

  async function passwordStep(ctx: Ctx, session: DashboardSession, form: Form) {
    const email = (form.email ?? "").trim();
    const password = form.password ?? "";
    if (!email || !password) return loginPage(ctx, session, 422, "Enter your email and password.", email);
    if (await tooMany(ctx, email)) return loginPage(ctx, session, 429, "Too many failed logins. Try again in 15 minutes.", email);
    let member;
    try {
      member = (await members.verifyMemberPassword({ email, password })).member!;
    } catch (err) {
      if (!(err instanceof ConnectError && (err.code === Code.Unauthenticated || err.code === Code.InvalidArgument))) throw err;
      await failed(ctx, email);
      return loginPage(ctx, session, 401, "The email or password is incorrect.", email);
    }
    if (!member.totpEnabled) {
      await sessions.start(ctx, { stage: "enrol", memberId: member.id, email: member.email });
      return redirect(ctx, ENROL_PATH);
    }
    await sessions.start(ctx, { stage: "password", memberId: member.id, email: member.email });
    return redirect(ctx, LOGIN_PATH);
  }

  async function codeStep(ctx: Ctx, session: DashboardSession, form: Form) {
    if (session.stage !== "password" || !session.memberId) return loginPage(ctx, session, 401, "Log in with your email and password first.");
    const email = session.email ?? "";
    if (await tooMany(ctx, email)) return loginPage(ctx, session, 429, "Too many wrong codes. Try again in 15 minutes.");
    const code = (form.totp ?? "").trim();
    const check = code ? await members.verifyMemberCode({ memberId: session.memberId, code }) : { ok: false };
    if (!check.ok) {
      await failed(ctx, email);
      return loginPage(ctx, session, 401, "That code is not right or was already used. Enter the next code from your app, or a recovery code.");
    }
    // A new session id at the privilege change; the 12 hours count from here.
    await sessions.start(ctx, { stage: "active", memberId: session.memberId, email });
    return redirect(ctx, DASHBOARD);
  }

  router.post(`${DASHBOARD}/logout`, async (ctx) => {
    const c = ctx as unknown as Ctx;
    await pages.guarded(c, async () => {
      securityHeaders(c, []);
      const session = await sessions.read(c);
      const form = formBody(c);
      if (!session || !safeEqual(form.csrf ?? "", session.csrf)) return pages.staleForm(c);
      await sessions.end(c);
      return redirect(c, LOGIN_PATH);
    });
  });

  // The invite: the token in the URL is checked on every request (single use, 7 days).
  const inviteGone = (ctx: Ctx) =>
    pages.statusPage(ctx, 404, "This invite is not valid", "The link is unknown, was already used or has expired. Ask whoever invited you for a new one.");
  async function invitePage(ctx: Ctx, session: DashboardSession, token: string, status = 200, error?: string) {
    let member;
    try {
      member = (await members.getInvite({ inviteToken: token })).member!;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) return inviteGone(ctx);
      throw err;
    }
    pages.page(ctx, status, "dashboard/invite", {
      action: `${INVITE_PATH}/${token}`,
      csrf: session.csrf,
      merchantName: member.merchantName,
      email: member.email,
      roleText: roleText(member.role),
      minLength: MIN_PASSWORD_LENGTH,
      error,
    });
  }

  // The token's format is checked before step() reads or starts a session: a guessed link must not cost a Redis session.
  const openInvite = step(false, async (ctx, session) => invitePage(ctx, session, ctx.params.token!));
  router.get(`${INVITE_PATH}/:token`, async (ctx: unknown) => {
    const c = ctx as Ctx;
    if (TOKEN.test(c.params.token ?? "")) return openInvite(c);
    await pages.guarded(c, async () => {
      securityHeaders(c, []);
      inviteGone(c);
    });
  });

  router.post(
    `${INVITE_PATH}/:token`,
    step(true, async (ctx, session, form) => {
      const token = ctx.params.token ?? "";
      if (!TOKEN.test(token)) return inviteGone(ctx);
      if (form.action !== "accept-invite") return invitePage(ctx, session, token, 400, "Choose a password and select Set password and continue.");
      try {
        const { member } = await members.acceptInvite({ inviteToken: token, password: form.password ?? "" });
        await sessions.start(ctx, { stage: "enrol", memberId: member!.id, email: member!.email });
        return redirect(ctx, ENROL_PATH);
      } catch (err) {
        if (!(err instanceof ConnectError)) throw err;
        if (err.code === Code.NotFound) return inviteGone(ctx);
        if (errorCodeOf(err) === "WEAK_PASSWORD") return invitePage(ctx, session, token, 422, err.rawMessage);
        throw err;
      }
    }),
  );

  async function enrolPage(ctx: Ctx, session: DashboardSession, status = 200, error?: string) {
    const { secret, uri } = await members.getTotpEnrolment({ memberId: session.memberId! });
    pages.page(ctx, status, "dashboard/enrol", {
      action: ENROL_PATH,
      csrf: session.csrf,
      secret,
      secretGrouped: secret.match(/.{1,4}/g)!.join(" "),
      qr: qrPath(uri),
      error,
    });
  }

  router.get(
    ENROL_PATH,
    step(false, async (ctx, session) => {
      if (session.stage !== "enrol") return redirect(ctx, LOGIN_PATH);
      return enrolPage(ctx, session);
    }),
  );

  router.post(
    ENROL_PATH,
    step(true, async (ctx, session, form) => {
      if (session.stage !== "enrol" || !session.memberId) return redirect(ctx, LOGIN_PATH);
      const email = session.email ?? "";
      if (await tooMany(ctx, email)) return enrolPage(ctx, session, 429, "Too many wrong codes. Try again in 15 minutes.");
      try {
        const { recoveryCodes } = await members.enableTotp({ memberId: session.memberId, code: (form.totp ?? "").trim() });
        // Enrolled and logged in (password and a code, just now): a new session id.
        await sessions.start(ctx, { stage: "active", memberId: session.memberId, email });
        return pages.page(ctx, 200, "dashboard/recovery-codes", { codes: recoveryCodes });
      } catch (err) {
        if (!(err instanceof ConnectError)) throw err;
        if (errorCodeOf(err) === "TOTP_CODE_INVALID") {
          await failed(ctx, email);
          return enrolPage(ctx, session, 422, "That code is not right. Enter the code your app shows now.");
        }
        if (errorCodeOf(err) === "TOTP_ALREADY_ENABLED" || err.code === Code.NotFound) return redirect(ctx, LOGIN_PATH);
        throw err;
      }
    }),
  );

  return router;
}

/** The QR code of `text` as an SVG path: one unit square per dark module, a 4-module quiet zone. */
function qrPath(text: string): { viewBox: string; path: string } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: "M" });
  const quiet = 4;
  const parts: string[] = [];
  for (let y = 0; y < modules.size; y++) {
    for (let x = 0; x < modules.size; x++) if (modules.get(y, x)) parts.push(`M${x + quiet} ${y + quiet}h1v1h-1z`);
  }
  const side = modules.size + 2 * quiet;
  return { viewBox: `0 0 ${side} ${side}`, path: parts.join("") };
}
