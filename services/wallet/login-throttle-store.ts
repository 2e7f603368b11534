import type { EntityManager } from "@mikro-orm/postgresql";

/** The per-email login counters (login-throttle.ts holds the rules). */

/**
 * Counts one attempt in one statement (so parallel guesses cannot overshoot):
 * a window opened at or before `windowOpenedBefore` has run out and starts
 * again at `now` with this attempt. Answers the window's count and start.
 */
export async function countAttemptInWindow(
  em: EntityManager,
  email: string,
  now: Date,
  windowOpenedBefore: Date,
): Promise<{ failures: number; window_started_at: Date }> {
  const rows = await em.execute<{ failures: number; window_started_at: Date }[]>(
    `insert into wallet_login_throttles as t (email, window_started_at, failures) values (?, ?, 1)
     on conflict (email) do update set
       failures = case when t.window_started_at <= ? then 1 else t.failures + 1 end,
       window_started_at = case when t.window_started_at <= ? then excluded.window_started_at else t.window_started_at end
     returning failures, window_started_at`,
    [email, now, windowOpenedBefore, windowOpenedBefore],
  );
  return rows[0]!;
}

export async function forgetLoginFailures(em: EntityManager, email: string): Promise<void> {
  await em.execute("delete from wallet_login_throttles where email = ?", [email]);
}
