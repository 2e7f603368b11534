import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { isUuid } from "../platform/ids.ts";
import { WalletUser } from "./entities.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { checkPin } from "./wallet-input.ts";
import { verifySecret } from "../platform/secret-hashing.ts";

/**
 * Six digits are guessable in bulk, so wrong PINs are counted per wallet user:
 * the PIN_MAX_ATTEMPTS-th wrong one in a row locks the PIN for PIN_LOCK_MS on
 * the service clock. While locked nothing is checked (a correct PIN does not
 * unlock early). A correct PIN resets the count. When the lock runs out the
 * user gets PIN_MAX_ATTEMPTS fresh tries.
 */
export const PIN_MAX_ATTEMPTS = 5;
export const PIN_LOCK_MS = 15 * 60 * 1000;

interface PinCheck {
  ok: boolean;
  attemptsLeft: number;
  locked: boolean;
  lockedUntil: Date | undefined;
}

export async function verifyPin(ctx: UseCaseContext, input: { walletUserId: string; pin: string }): Promise<PinCheck> {
  if (!isUuid(input.walletUserId)) throw walletUserNotFound(input.walletUserId);
  // A malformed PIN is a client error, not a guess: it is refused without counting.
  checkPin(input.pin);
  // The row lock makes check-and-count atomic: parallel guesses are counted one by one.
  return ctx.em.transactional(async (em) => {
    const user = await em.findOne(WalletUser, { id: input.walletUserId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw walletUserNotFound(input.walletUserId);
    const now = ctx.clock.now();
    if (user.pinLockedUntil && user.pinLockedUntil.getTime() > now.getTime()) {
      return { ok: false, attemptsLeft: 0, locked: true, lockedUntil: user.pinLockedUntil };
    }
    if (user.pinLockedUntil) {
      user.pinLockedUntil = null;
      user.pinFailedAttempts = 0;
    }
    const ok = await verifySecret(user.pinHash, input.pin);
    user.updatedAt = now;
    if (ok) {
      user.pinFailedAttempts = 0;
      return { ok: true, attemptsLeft: PIN_MAX_ATTEMPTS, locked: false, lockedUntil: undefined };
    }
    user.pinFailedAttempts += 1;
    if (user.pinFailedAttempts >= PIN_MAX_ATTEMPTS) {
      user.pinLockedUntil = new Date(now.getTime() + PIN_LOCK_MS);
      return { ok: false, attemptsLeft: 0, locked: true, lockedUntil: user.pinLockedUntil };
    }
    return { ok: false, attemptsLeft: PIN_MAX_ATTEMPTS - user.pinFailedAttempts, locked: false, lockedUntil: undefined };
  });
}
