import { createHash, randomBytes } from "node:crypto";
import type { ParameterizedContext } from "koa";
import type { RedisConnection as Redis } from "../../../services/platform/redis.ts";
import { DASHBOARD } from "./paths.ts";

/**
 * Dashboard sessions, kept in Redis (so logout, a new id at login and the
 * idle timeout are real: the cookie holds only a random id, Redis only its
 * SHA-256). Stages: `anonymous` (a CSRF token for the login and invite
 * forms), `password` (password right, TOTP code awaited), `enrol` (password
 * set or right, TOTP not enrolled yet), `active` (logged in). The key expires
 * after 30 idle minutes (every request renews it); a session is refused 12
 * hours after its login whatever its use. A new id is issued at every change
 * of stage. The cookie: HttpOnly, SameSite=Strict, Path=/dashboard, Secure
 * when PUBLIC_BASE_URL is https. Wall-clock security timeouts, not business time.
 */
export interface DashboardSession {
  stage: "anonymous" | "password" | "enrol" | "active";
  csrf: string;
  memberId?: string;
  email?: string;
  /** When this stage began (epoch ms): the 12-hour limit counts from the login. */
  startedAt: number;
}

const DASHBOARD_COOKIE = "billing_dashboard";
const IDLE_TIMEOUT_MS = 30 * 60 * 1000;
const ABSOLUTE_TIMEOUT_MS = 12 * 60 * 60 * 1000;

export interface DashboardSessions {
  read(ctx: ParameterizedContext): Promise<DashboardSession | undefined>;
  /** A new session id (the old one is deleted) for `session`; sets the cookie. */
  start(ctx: ParameterizedContext, session: Omit<DashboardSession, "csrf" | "startedAt">): Promise<DashboardSession>;
  /** Renews the idle timeout of the session the request presented. */
  touch(ctx: ParameterizedContext): Promise<void>;
  end(ctx: ParameterizedContext): Promise<void>;
}

export function dashboardSessions(redis: Redis, prefix: string, secure: boolean, now: () => number = Date.now): DashboardSessions {
  const keyOf = (sid: string) => `${prefix}:dashboard-session:${createHash("sha256").update(sid).digest("hex")}`;
  const cookieSid = (ctx: ParameterizedContext) => {
    const sid = ctx.cookies.get(DASHBOARD_COOKIE);
    return sid && /^[A-Za-z0-9_-]{43}$/.test(sid) ? sid : undefined;
  };
  const setCookie = (ctx: ParameterizedContext, value: string, maxAge?: number) => {
    // Behind a TLS-terminating proxy Koa may not know the request was https; the public URL decides.
    if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
    ctx.cookies.set(DASHBOARD_COOKIE, value, {
      httpOnly: true,
      sameSite: "strict",
      secure,
      path: DASHBOARD,
      overwrite: true,
      signed: false,
      ...(maxAge !== undefined && { maxAge, expires: new Date(0) }),
    });
  };
  const save = (sid: string, session: DashboardSession) => redis.set(keyOf(sid), JSON.stringify(session), "PX", IDLE_TIMEOUT_MS);
  return {
    async read(ctx) {
      const sid = cookieSid(ctx);
      if (!sid) return undefined;
      const raw = await redis.get(keyOf(sid));
      if (!raw) return undefined;
      const session = JSON.parse(raw) as DashboardSession;
      if (now() - session.startedAt > ABSOLUTE_TIMEOUT_MS) {
        await redis.del(keyOf(sid));
        return undefined;
      }
      return session;
    },
    async start(ctx, fields) {
      const old = cookieSid(ctx);
      if (old) await redis.del(keyOf(old));
      const sid = randomBytes(32).toString("base64url");
      const session: DashboardSession = { ...fields, csrf: randomBytes(32).toString("base64url"), startedAt: now() };
      await save(sid, session);
      setCookie(ctx, sid);
      return session;
    },
    async touch(ctx) {
      const sid = cookieSid(ctx);
      if (sid) await redis.pexpire(keyOf(sid), IDLE_TIMEOUT_MS);
    },
    async end(ctx) {
      const sid = cookieSid(ctx);
      if (sid) await redis.del(keyOf(sid));
      setCookie(ctx, "", 0);
    },
  };
}
