import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { LoginLimiter } from "./login-limiter.ts";
import { postedSession, type PageSession, type SessionCodec } from "./page-session.ts";
import type { Ctx, Form } from "./page-http.ts";
import { formatUtc } from "./page-text.ts";

const PIN = /^\d{6}$/;

/** A step refused with the status and the sentence to show in [role=alert]. */
interface Refusal {
  status: number;
  error: string;
}

type LoginOutcome = { ok: true; userId: string; email: string } | ({ ok: false; email: string } & Refusal);

/**
 * How a customer proves who they are on every hosted page (approval,
 * plan change, self-service), in one place:
 * - the session and CSRF check of a posted form;
 * - the login: the wallet checks email and password (and limits tries per
 *   email); failed logins are also limited per client address here;
 * - the PIN before every change: checked by the wallet, which counts wrong
 *   tries and locks after 5, so a locked PIN refuses even the right one.
 * What follows a login (which user may log in, where the session points) is
 * the page's business.
 */
export interface CustomerAuth {
  /** The session a posted form belongs to, when its CSRF token matches; else undefined (answer staleForm). */
  postedSession(ctx: Ctx, scope: string, form: Form): PageSession | undefined;
  logIn(ctx: Ctx, form: Form): Promise<LoginOutcome>;
  /** Undefined when the PIN is right; `whileLocked` says what a locked PIN prevents ("Approval is not possible while it is locked."). */
  checkPin(walletUserId: string, pin: string, whileLocked: string): Promise<Refusal | undefined>;
}

export function customerAuth(options: { wallet: Client<typeof WalletService>; sessions: SessionCodec; limiter: LoginLimiter }): CustomerAuth {
  const { wallet, sessions, limiter } = options;
  return {
    postedSession: (ctx, scope, form) => postedSession(sessions, ctx, scope, form),

    async logIn(ctx, form) {
      const email = (form.email ?? "").trim();
      const password = form.password ?? "";
      const refused = (status: number, error: string): LoginOutcome => ({ ok: false, status, error, email });
      if (!email || !password) return refused(422, "Enter your email and password.");
      if (await limiter.blocked(ctx.ip)) return refused(429, "Too many failed logins from this device. Try again in 15 minutes.");
      try {
        const { user } = await wallet.verifyPassword({ email, password });
        return { ok: true, userId: user!.id, email };
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.ResourceExhausted)
          return refused(429, "Too many failed logins for this account. Try again later.");
        if (err instanceof ConnectError && (err.code === Code.Unauthenticated || err.code === Code.InvalidArgument)) {
          await limiter.failed(ctx.ip);
          return refused(401, "The email or password is incorrect.");
        }
        throw err;
      }
    },

    async checkPin(walletUserId, pin, whileLocked) {
      if (!PIN.test(pin)) return { status: 422, error: "Your payment PIN is six digits." };
      const check = await wallet.verifyPin({ walletUserId, pin });
      if (check.locked) {
        const until = check.lockedUntil ? ` until ${formatUtc(timestampDate(check.lockedUntil))}` : "";
        return { status: 423, error: `Too many wrong PINs: your PIN is locked${until}. ${whileLocked}` };
      }
      if (!check.ok) {
        const left = check.attemptsLeft;
        return { status: 401, error: `Wrong PIN. ${left} ${left === 1 ? "attempt" : "attempts"} left before your PIN is locked.` };
      }
      return undefined;
    },
  };
}
