import { performance } from "node:perf_hooks";
import type { BillingMetrics } from "./metrics.ts";

/** Runs one job's handler and records its duration and outcome (completed or failed). */
export async function observeJob<T>(metrics: BillingMetrics | undefined, job: string, run: () => Promise<T>): Promise<T> {
  if (!metrics) return run();
  const started = performance.now();
  let outcome = "failed";
  try {
    const result = await run();
    outcome = "completed";
    return result;
  } finally {
    metrics.jobDuration.observe({ job_name: job, outcome }, (performance.now() - started) / 1000);
  }
}
