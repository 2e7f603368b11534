import type { Config } from "./config.ts";
import type { Orm } from "./database/orm.ts";
import { SandboxClock, systemClock, type Clock } from "./clock.ts";
import { readSandboxClockOffsetMs } from "./sandbox-clock-store.ts";

export interface ManagedClock {
  clock: Clock;
  stop(): void;
}

/** Sandbox clocks re-read the shared offset every second, so every process agrees within one. */
export async function createClock(config: Config, orm: Orm): Promise<ManagedClock> {
  if (!config.sandbox) return { clock: systemClock, stop: () => {} };
  const clock = new SandboxClock({
    readOffsetMs: () => readSandboxClockOffsetMs(orm.em),
  });
  await clock.sync();
  const timer = setInterval(() => clock.sync().catch(() => {}), 1000);
  timer.unref();
  return { clock, stop: () => clearInterval(timer) };
}
