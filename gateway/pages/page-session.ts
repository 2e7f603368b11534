import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import type { ParameterizedContext } from "koa";
import { setActor } from "../../services/platform/audit/call-context.ts";

/**
 * The hosted page's session: a small HMAC-signed cookie (key derived from
 * SECRETS_KEY), so any gateway instance can read it and nothing is stored
 * server-side. It is bound to one approval token (its digest is inside and
 * the cookie's Path is the page's own path) and carries the CSRF token and,
 * after login, the wallet user id. It proves only what the gateway wrote:
 * the password was checked; the PIN is checked again on every approval.
 * Session lifetimes are wall-clock security timeouts, not business time.
 */
export interface PageSession {
  /** Digest of the approval token the session belongs to. */
  t: string;
  csrf: string;
  /** Wallet user id (and the email used) once logged in. */
  uid?: string;
  email?: string;
  /** Expiry, epoch ms. */
  exp: number;
}

export const SESSION_COOKIE = "billing_approval";
const SESSION_TTL_MS = 30 * 60 * 1000;

export interface SessionCodec {
  read(ctx: ParameterizedContext, token: string): PageSession | undefined;
  /** A fresh session (new CSRF token), optionally logged in; written to the response cookie. */
  issue(ctx: ParameterizedContext, token: string, cookiePath: string, user?: { uid: string; email: string }): PageSession;
  clear(ctx: ParameterizedContext, cookiePath: string): void;
}

export function deriveSessionKey(secretsKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", secretsKey, Buffer.alloc(0), "hosted-page-session-v1", 32));
}

export function sessionCodec(key: Buffer, secure: boolean): SessionCodec {
  const sign = (payload: string) => createHmac("sha256", key).update(payload).digest("base64url");
  const cookieOptions = (path: string, maxAge: number) => ({ httpOnly: true, sameSite: "lax" as const, secure, path, maxAge, overwrite: true, signed: false });
  return {
    read(ctx, token) {
      const raw = ctx.cookies.get(SESSION_COOKIE);
      if (!raw) return undefined;
      const [payload, mac] = raw.split(".");
      if (!payload || !mac || !safeEqual(mac, sign(payload))) return undefined;
      try {
        const session = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as PageSession;
        if (typeof session.exp !== "number" || session.exp < Date.now()) return undefined;
        if (!safeEqual(session.t, tokenDigest(token))) return undefined;
        return session;
      } catch {
        return undefined;
      }
    },
    issue(ctx, token, cookiePath, user) {
      const session: PageSession = { t: tokenDigest(token), csrf: randomBytes(32).toString("base64url"), exp: Date.now() + SESSION_TTL_MS, ...user };
      const payload = Buffer.from(JSON.stringify(session)).toString("base64url");
      // Behind a TLS-terminating proxy Koa may not know the request was https; the public URL decides.
      if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
      ctx.cookies.set(SESSION_COOKIE, `${payload}.${sign(payload)}`, cookieOptions(cookiePath, SESSION_TTL_MS));
      return session;
    },
    clear(ctx, cookiePath) {
      if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
      ctx.cookies.set(SESSION_COOKIE, "", { ...cookieOptions(cookiePath, 0), expires: new Date(0) });
    },
  };
}

const tokenDigest = (token: string) => createHash("sha256").update(`session:${token}`).digest("base64url");

/** The session a posted form belongs to, when its CSRF token matches; else undefined (answer staleForm). */
const ANONYMOUS_CUSTOMER = Object.freeze({ type: "customer" as const, id: "anonymous", label: "customer (not logged in)" });

export function postedSession(sessions: SessionCodec, ctx: ParameterizedContext, scope: string, form: { csrf?: string | undefined }): PageSession | undefined {
  const session = sessions.read(ctx, scope);
  if (!session || !safeEqual(form.csrf ?? "", session.csrf)) return undefined;
  // Whatever this form does next, the customer did it (a decline may come before any login).
  setActor(session.uid ? { type: "customer", id: session.uid, label: session.email ?? "" } : ANONYMOUS_CUSTOMER);
  return session;
}

/** Timing-safe comparison of two strings (digested first so lengths do not leak either). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db);
}
