import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError, invalid } from "../platform/errors.ts";
import { SandboxClock } from "../platform/clock.ts";
import { advanceSandboxClockOffsetMs } from "../platform/sandbox-clock-store.ts";

const MAX_ADVANCE_SECONDS = 5 * 366 * 24 * 3600;

/**
 * Moves the shared clock forward (never back: time-driven work assumes time
 * only grows). Every process picks the offset up within a second, and the
 * sweeps, which sync the clock first, run whatever became due. `prepare` runs
 * first, with the time the advance moves to, while nothing runs at that time
 * yet (the retained tables' months: made while rows of them are being written,
 * a month's attach would fail those writers).
 */
export async function advanceClock(
  ctx: UseCaseContext,
  seconds: number,
  prepare: (target: Date) => Promise<void> = async () => {},
): Promise<{ now: Date; offsetSeconds: number }> {
  if (!(ctx.clock instanceof SandboxClock)) throw new DomainError("failed_precondition", "SANDBOX_DISABLED", "the sandbox clock exists only when SANDBOX=true");
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS) {
    throw invalid("INVALID_REQUEST", `seconds: must be an integer from 1 to ${MAX_ADVANCE_SECONDS}`);
  }
  await ctx.clock.sync();
  await prepare(new Date(ctx.clock.now().getTime() + seconds * 1000));
  const offsetMs = await advanceSandboxClockOffsetMs(ctx.em, seconds * 1000);
  ctx.clock.setOffset(offsetMs);
  return { now: ctx.clock.now(), offsetSeconds: Math.floor(offsetMs / 1000) };
}

export async function getClock(ctx: UseCaseContext): Promise<{ now: Date; offsetSeconds: number }> {
  if (!(ctx.clock instanceof SandboxClock)) throw new DomainError("failed_precondition", "SANDBOX_DISABLED", "the sandbox clock exists only when SANDBOX=true");
  await ctx.clock.sync();
  return { now: ctx.clock.now(), offsetSeconds: Math.floor((ctx.clock.now().getTime() - Date.now()) / 1000) };
}
