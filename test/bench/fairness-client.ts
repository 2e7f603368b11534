/**
 * A client of the fairness benchmark, in a process of its own that imports nothing but node:http (so its start and
 * its garbage never pause the service or the other client). It waits for tasks on IPC and answers each with its load.
 */
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/** One paced run: `rps` GETs of `url` for `seconds`, at most `maxInFlight` open. */
export interface ClientTask {
  url: string;
  apiKey: string;
  rps: number;
  seconds: number;
  maxInFlight: number;
}

export interface Load {
  latencies: number[];
  /** Answers by status (0 = skipped because `maxInFlight` were open, -1 = network error). */
  statuses: Record<number, number>;
}

/**
 * Open loop: requests start on schedule whether or not earlier ones finished
 * (as real clients do), with at most `maxInFlight` open (a send due while
 * that many are open is skipped and counted as 0).
 */
async function paced(task: ClientTask, agent: http.Agent): Promise<Load> {
  const load: Load = { latencies: [], statuses: {} };
  const count = (key: number) => {
    load.statuses[key] = (load.statuses[key] ?? 0) + 1;
  };
  const get = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(task.url, { agent, headers: { "x-api-key": task.apiKey } }, (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? -1));
      });
      req.once("error", reject);
    });
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const total = Math.round(task.rps * task.seconds);
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / task.rps - performance.now();
    if (wait > 1) await sleep(wait);
    if (inFlight.size >= task.maxInFlight) {
      count(0);
      continue;
    }
    const t = performance.now();
    const p: Promise<void> = get().then(
      (status) => {
        load.latencies.push(performance.now() - t);
        count(status);
      },
      () => count(-1),
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  return load;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
process.on("message", async (task) => process.send!(await paced(task as ClientTask, agent)));
process.once("disconnect", () => process.exit(0));
process.send!("ready");
