import { Session } from "node:inspector/promises";
import { writeFile } from "node:fs/promises";

/**
 * With BENCH_PROFILE=<file prefix>, records a CPU profile of this process
 * (the service, all-in-one) over a measured window only, not the seeding:
 * `<prefix>-<name>.cpuprofile`, readable in Chrome DevTools. Without it, nothing.
 */
export async function profileWindow(name: string): Promise<() => Promise<void>> {
  const prefix = process.env.BENCH_PROFILE;
  if (!prefix) return async () => {};
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(`${prefix}-${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  };
}
