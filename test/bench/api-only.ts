/**
 * The service side of B3 then B1 alone (no baselines), for profiling the API path:
 * `BENCH_PROFILE=/tmp/api node test/bench/api-only.ts` writes /tmp/api-create.cpuprofile and
 * /tmp/api-read.cpuprofile (profile.ts; the bench process is the service). Prints the process's CPU per
 * request, steadier than req/s on a shared machine. BENCH_DURATION/BENCH_WARMUP as the bench.
 */
import { dropTemplate } from "../support/database.ts";
import { ApiFigures, type FigureResult } from "./figures.ts";
import { profileWindow } from "./profile.ts";

async function measured(name: string, run: () => Promise<FigureResult>) {
  const stopProfile = await profileWindow(name);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await run();
  const used = process.cpuUsage(cpu);
  await stopProfile();
  // The process's CPU per request (load-independent, unlike req/s): includes the seeding reads.
  const seconds = (performance.now() - started) / 1000;
  result.values.cpu_ms_per_req = (used.user + used.system) / 1000 / (result.values.req_per_s! * seconds);
  const mem = process.memoryUsage();
  const mib = (n: number) => Math.round(n / 2 ** 20);
  console.log(
    name,
    JSON.stringify(result),
    `rss ${mib(mem.rss)} heapUsed ${mib(mem.heapUsed)} heapTotal ${mib(mem.heapTotal)} external ${mib(mem.external)} arrayBuffers ${mib(mem.arrayBuffers)} MiB`,
  );
}

const api = new ApiFigures();
await api.start();
try {
  await measured("create", () => api.create());
  await measured("read", () => api.read());
} finally {
  await api.close();
  await dropTemplate();
}
