import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError, invalid } from "../platform/errors.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";
import { walletEmail, PASSWORD_MAX } from "./wallet-input.ts";
import { burnVerifyTime, verifySecret } from "../platform/secret-hashing.ts";
import { clearLoginFailures, countLoginAttempt } from "./login-throttle.ts";

/**
 * Login. Unknown email and wrong password give the same answer after the same
 * work (a dummy hash is verified), so neither the message nor the timing says
 * which emails exist. The throttle counts unknown emails too, for the same reason.
 * A frozen user can still log in (freezing stops charges, not reads).
 */
export async function verifyPassword(ctx: UseCaseContext, input: { email: string; password: string }): Promise<WalletUserRow> {
  const email = walletEmail(input.email);
  // Only the length is checked (the rules may have changed since sign-up); an over-long one would burn hashing time.
  const length = [...input.password].length;
  if (length < 1 || length > PASSWORD_MAX) throw invalid("INVALID_REQUEST", `password: must be 1 to ${PASSWORD_MAX} characters`);
  const throttle = await countLoginAttempt(ctx.em, email, ctx.clock.now());
  if (!throttle.allowed) {
    throw new DomainError("rate_limited", "LOGIN_RATE_LIMITED", `too many failed logins for this email; try again after ${throttle.retryAt.toISOString()}`);
  }
  const user = await ctx.em.findOne(WalletUser, { email });
  const ok = user ? await verifySecret(user.passwordHash, input.password) : (await burnVerifyTime(input.password), false);
  if (!user || !ok) throw new DomainError("unauthenticated", "INVALID_CREDENTIALS", "email or password is wrong");
  await clearLoginFailures(ctx.em, email);
  return user;
}
