import { createHash } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { Member, MembersService } from "../../../proto/gen/billing/merchants/v1/members_pb.ts";
import { may, type Permission } from "../../../services/merchants/members/contract.ts";
import type { GatewayClients } from "../../deps.ts";
import type { LoginLimiter } from "../login-limiter.ts";
import { formBody, redirect, securityHeaders, type Ctx, type Form, type PageResponder } from "../page-http.ts";
import { safeEqual } from "../page-session.ts";
import type { DashboardFrame } from "../views.ts";
import type { DashboardSession, DashboardSessions } from "./session-store.ts";
import { LOGIN_PATH } from "./paths.ts";
import { NAV, roleText } from "./words.ts";
import { setActor } from "../../../services/platform/audit/call-context.ts";

export interface DashboardDeps {
  members: Client<typeof MembersService>;
  /** Every page reads and acts through the same RPCs (and so the same checks) as the REST API. */
  clients: GatewayClients;
  sessions: DashboardSessions;
  pages: PageResponder;
  /** Failed logins and codes, per client address and per email (the hosted pages' limiter, own keys). */
  limits: { client: LoginLimiter; email: LoginLimiter };
  publicBaseUrl: string;
}

/** A logged-in member on one request: its session (CSRF token) and its member record as of now. */
export interface Signed {
  session: DashboardSession;
  member: Member;
  may(permission: Permission): boolean;
  frame(title: string, current: string): DashboardFrame;
}

export const limiterKeyOf = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("hex");

/**
 * Every dashboard page but the sign-in ones goes through here: security
 * headers, the session (30 min idle, 12 h absolute, renewed on use), the
 * member read afresh (a removed member or a new role counts at once), the
 * CSRF token of every POST, and failures as pages. The handler gets the
 * member; permissions are checked by the handler with `refuse`.
 */
export function dashboardRoute(router: Router, deps: DashboardDeps, path: string, handlers: { get?: PageHandler; post?: PageHandler }): void {
  const run = (handler: PageHandler, posted: boolean) => async (ctx: unknown) => {
    const c = ctx as Ctx;
    await deps.pages.guarded(c, async () => {
      securityHeaders(c, []);
      const session = await deps.sessions.read(c);
      if (!session || session.stage !== "active" || !session.memberId) {
        if (posted) return deps.pages.staleForm(c);
        return redirect(c, LOGIN_PATH);
      }
      const form = posted ? formBody(c) : {};
      if (posted && !safeEqual(form.csrf ?? "", session.csrf)) return deps.pages.staleForm(c);
      let member: Member;
      try {
        member = (await deps.members.getMember({ memberId: session.memberId })).member!;
      } catch (err) {
        if (!(err instanceof ConnectError && err.code === Code.NotFound)) throw err;
        await deps.sessions.end(c);
        return redirect(c, LOGIN_PATH);
      }
      await deps.sessions.touch(c);
      setActor({ type: "member", id: member.id, label: member.email });
      const signed: Signed = {
        session,
        member,
        may: (permission) => may(member.role, permission),
        frame: (title, current) => ({
          title,
          merchantName: member.merchantName,
          email: member.email,
          roleText: roleText(member.role),
          csrf: session.csrf,
          nav: NAV.map((link) => ({ ...link, current: link.href === current })),
        }),
      };
      await handler(c, signed, form);
    });
  };
  if (handlers.get) router.get(path, run(handlers.get, false));
  if (handlers.post) router.post(path, run(handlers.post, true));
}

type PageHandler = (ctx: Ctx, signed: Signed, form: Form) => Promise<void>;

/** 403 with the reason in [role=alert]: the role may not do this (its button is not shown either). */
export function refuse(deps: DashboardDeps, ctx: Ctx, signed: Signed, current: string): void {
  deps.pages.page(ctx, 403, "dashboard/message", {
    frame: signed.frame("Not allowed", current),
    heading: "Not allowed",
    message: `Your role (${roleText(signed.member.role)}) may not do this. Ask an owner or admin of ${signed.member.merchantName}.`,
  });
}

/** Another merchant's object, or none: the same 404 page. */
export function notFoundPage(deps: DashboardDeps, ctx: Ctx): void {
  deps.pages.statusPage(ctx, 404, "Not found", "There is nothing at this address in your dashboard.");
}

/**
 * A fresh TOTP code in the form of a sensitive action: undefined when right
 * (and now spent), else the sentence to show. Wrong codes count as failed
 * logins (per address and per email), so the code cannot be guessed here either.
 */
export async function checkFreshCode(deps: DashboardDeps, ctx: Ctx, signed: Signed, form: Form): Promise<string | undefined> {
  const code = (form.totp ?? "").trim();
  if (!/^\d{6}$/.test(code)) return "Enter the current 6-digit code from your authenticator app to confirm.";
  const email = limiterKeyOf(signed.member.email);
  if ((await deps.limits.client.blocked(ctx.ip)) || (await deps.limits.email.blocked(email))) return "Too many wrong codes. Try again in 15 minutes.";
  const check = await deps.members.verifyMemberCode({ memberId: signed.member.id, code });
  if (check.ok) return undefined;
  await Promise.all([deps.limits.client.failed(ctx.ip), deps.limits.email.failed(email)]);
  return "That code is not right or was already used. Enter the next code from your authenticator app.";
}
