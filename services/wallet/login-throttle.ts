import type { EntityManager } from "@mikro-orm/postgresql";
import { countAttemptInWindow, forgetLoginFailures } from "./login-throttle-store.ts";

/**
 * Per-email login throttle, kept in Postgres (the source of truth; every
 * process sees the same counters) on the service clock. A fixed window opens
 * at the first failure; at most LOGIN_MAX_FAILURES password checks may fail in
 * it. Each attempt is counted BEFORE the password is checked, so parallel
 * guesses cannot overshoot the limit; a correct password clears the counter.
 */
export const LOGIN_MAX_FAILURES = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

interface ThrottleState {
  /** False when this attempt is over the limit: answer without checking the password. */
  allowed: boolean;
  /** When the window (and so the refusal) ends. */
  retryAt: Date;
}

export async function countLoginAttempt(em: EntityManager, email: string, now: Date): Promise<ThrottleState> {
  const windowOpenedBefore = new Date(now.getTime() - LOGIN_WINDOW_MS);
  const row = await countAttemptInWindow(em, email, now, windowOpenedBefore);
  return {
    allowed: row.failures <= LOGIN_MAX_FAILURES,
    retryAt: new Date(new Date(row.window_started_at).getTime() + LOGIN_WINDOW_MS),
  };
}

export async function clearLoginFailures(em: EntityManager, email: string): Promise<void> {
  await forgetLoginFailures(em, email);
}
