/**
 * The service side of B3 then B1 alone (no baselines), for profiling the API path:
 * `node test/bench/api-only.ts [profile-dir]` writes create.cpuprofile and read.cpuprofile
 * (the bench process is the service). BENCH_DURATION/BENCH_WARMUP as the bench.
 */
import { Session } from "node:inspector/promises";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { dropTemplate } from "../support/database.ts";
import { ApiFigures, type FigureResult } from "./figures.ts";

const dir = process.argv[2];
const session = new Session();
session.connect();

async function profiled(name: string, run: () => Promise<FigureResult>) {
  if (dir) {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await run();
  const used = process.cpuUsage(cpu);
  // The process's CPU per request (load-independent, unlike req/s): includes the seeding reads.
  const seconds = (performance.now() - started) / 1000;
  result.values.cpu_ms_per_req = (used.user + used.system) / 1000 / (result.values.req_per_s! * seconds);
  if (dir) {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  }
  const mem = process.memoryUsage();
  const mib = (n: number) => Math.round(n / 2 ** 20);
  console.log(name, JSON.stringify(result), `rss ${mib(mem.rss)} heapUsed ${mib(mem.heapUsed)} heapTotal ${mib(mem.heapTotal)} external ${mib(mem.external)} arrayBuffers ${mib(mem.arrayBuffers)} MiB`);
}

const api = new ApiFigures();
await api.start();
try {
  await profiled("create", () => api.create());
  await profiled("read", () => api.read());
} finally {
  await api.close();
  await dropTemplate();
}
