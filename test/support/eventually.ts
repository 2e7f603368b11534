import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `check` until it returns a truthy value and returns that value; throws
 * after `timeoutMs`. Truthy rather than "defined" so a check written as a
 * comparison (`a === b`) keeps waiting while it is false. An error thrown by
 * `check` ends the wait at once: a check that expects failures catches them.
 * `what` names the awaited condition in the error; as a function it is asked
 * at the deadline, so the message can show the state last seen.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
  what: string | (() => string | Promise<string>) = "condition",
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : await what()}`);
    await sleep(everyMs);
  }
}
