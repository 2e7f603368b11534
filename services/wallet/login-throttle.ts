import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * Per-email login throttle, kept in Postgres (the source of truth; every
 * process sees the same counters) on the service clock. A fixed window opens
 * at the first failure; at most LOGIN_MAX_FAILURES password checks may fail in
 * it. Each attempt is counted BEFORE the password is checked, so parallel
 * guesses cannot overshoot the limit; a correct password clears the counter.
 */
export const LOGIN_MAX_FAILURES = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

export interface ThrottleState {
  /** False when this attempt is over the limit: answer without checking the password. */
  allowed: boolean;
  /** When the window (and so the refusal) ends. */
  retryAt: Date;
}

export async function countLoginAttempt(em: EntityManager, email: string, now: Date): Promise<ThrottleState> {
  const windowOpenedBefore = new Date(now.getTime() - LOGIN_WINDOW_MS);
  const rows = await em.execute<{ failures: number; window_started_at: Date }[]>(
    `insert into wallet_login_throttles as t (email, window_started_at, failures) values (?, ?, 1)
     on conflict (email) do update set
       failures = case when t.window_started_at <= ? then 1 else t.failures + 1 end,
       window_started_at = case when t.window_started_at <= ? then excluded.window_started_at else t.window_started_at end
     returning failures, window_started_at`,
    [email, now, windowOpenedBefore, windowOpenedBefore],
  );
  const row = rows[0]!;
  return {
    allowed: row.failures <= LOGIN_MAX_FAILURES,
    retryAt: new Date(new Date(row.window_started_at).getTime() + LOGIN_WINDOW_MS),
  };
}

export async function clearLoginFailures(em: EntityManager, email: string): Promise<void> {
  await em.execute("delete from wallet_login_throttles where email = ?", [email]);
}
