/**
 * `npm run bench` (issue 16): each figure against its bare-code baseline from
 * ../shared/bench, bracketed baseline → service → baseline in one run;
 * ratio = service ÷ mean of the two baselines. `npm run bench -- renewals`
 * runs one (names: create read expiry webhooks webhooks-split renewals). Not part of CI.
 * webhooks-split: the deployed shape, each role its own process (split-figures.ts).
 * Knobs: BENCH_EXPIRY (5000), BENCH_WEBHOOK_EVENTS (5000), BENCH_WEBHOOK_MAX_IN_FLIGHT (50), BENCH_RENEWALS
 * (10000), BENCH_DURATION/BENCH_WARMUP/BENCH_CONNECTIONS (the baselines'
 * autocannon shape, also used for the service), BENCH_BASELINES_DIR.
 * Needs DATABASE_URL and REDIS_URL (the test infrastructure).
 */
import { dropTemplate } from "../support/database.ts";
import { benchPgUrl, runBaseline, type BaselineName } from "./baselines.ts";
import { ApiFigures, expiryFigure, renewalsFigure, webhooksFigure, type FigureResult } from "./figures.ts";
import { splitWebhooksFigure } from "./split-figures.ts";

const ALL = ["create", "read", "expiry", "webhooks", "webhooks-split", "renewals"] as const;
type Figure = (typeof ALL)[number];
const asked = process.argv.slice(2).filter((a) => a !== "--");
const bad = asked.filter((a) => !ALL.includes(a as Figure));
if (bad.length) throw new Error(`unknown figure(s) ${bad.join(", ")}; known: ${ALL.join(" ")}`);
const figures: Figure[] = asked.length ? (asked as Figure[]) : [...ALL];

const EXPIRY = Number(process.env.BENCH_EXPIRY ?? 5000);
const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 5000);
/** The baseline's sender keeps 50 requests in flight: the same shape. */
const WEBHOOK_MAX_IN_FLIGHT = Number(process.env.BENCH_WEBHOOK_MAX_IN_FLIGHT ?? 50);
const RENEWALS = Number(process.env.BENCH_RENEWALS ?? 10_000);
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const baseEnv = { BENCH_PG_URL: benchPgUrl(databaseUrl), BENCH_REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" };

interface Row {
  figure: string;
  baseline: number[];
  service: number;
  /** higher: throughput (ratio = service/baseline, must be ≥ target); lower: time (ratio must be ≤ target); absolute: service itself vs target. */
  sense: "higher" | "lower" | "absolute";
  target: number;
  unit: string;
  correctness: string;
  ok: boolean;
}
const rows: Row[] = [];
const notes: string[] = [];

async function bracket(name: BaselineName, env: Record<string, string>, service: () => Promise<FigureResult>) {
  const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);
  log(`baseline ${name} (1/2)`);
  const before = await runBaseline(name, { ...baseEnv, ...env });
  log(`service`);
  const result = await service();
  log(`baseline ${name} (2/2)`);
  const after = await runBaseline(name, { ...baseEnv, ...env });
  if (result.notes) notes.push(result.notes);
  return { before, after, result };
}

const fmt = (n: number) => (Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2)) : "n/a");

function print() {
  const header = ["figure", "baseline (run1 / run2)", "service", "ratio", "target", "met", "correctness"];
  const lines = rows.map((r) => {
    const mean = (r.baseline[0]! + r.baseline[1]!) / 2;
    const ratio = r.service / mean;
    const met = r.sense === "higher" ? ratio >= r.target : r.sense === "lower" ? ratio <= r.target : r.service <= r.target;
    const spread = Math.abs(r.baseline[0]! - r.baseline[1]!) / mean;
    return [
      r.figure,
      `${fmt(r.baseline[0]!)} / ${fmt(r.baseline[1]!)} ${r.unit}${spread > 0.1 ? " (noisy >10%)" : ""}`,
      `${fmt(r.service)} ${r.unit}`,
      `${ratio.toFixed(3)}×`,
      r.sense === "higher" ? `≥ ${r.target}×` : r.sense === "lower" ? `≤ ${r.target}×` : `≤ ${r.target} ${r.unit}`,
      met ? "yes" : "NO",
      `${r.ok ? "ok" : "FAILED"}: ${r.correctness}`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const show = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join(" | ");
  console.log(`\nnode ${process.version}; ratio = service ÷ mean of the two baseline runs`);
  console.log(show(header));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const l of lines) console.log(show(l));
  for (const n of notes) console.log(`note: ${n}`);
}

try {
  if (figures.includes("create") || figures.includes("read")) {
    const api = new ApiFigures();
    await api.start();
    try {
      if (figures.includes("create")) {
        const { before, after, result } = await bracket("create", {}, () => api.create());
        rows.push({
          figure: "B3 POST /subscriptions req/s",
          baseline: [before.req_per_s!, after.req_per_s!],
          service: result.values.req_per_s!,
          sense: "higher",
          target: 0.3,
          unit: "req/s",
          correctness: result.correctness,
          ok: result.ok,
        });
        notes.push(
          `B3 pgbench ceiling: ${before.pgbench_tps} / ${after.pgbench_tps} tps; service p99 ${fmt(result.values.p99_ms!)} ms; RSS after B3 ${result.values.rss_mib} MiB (bench process = service + seeding)`,
        );
      }
      if (figures.includes("read")) {
        const { before, after, result } = await bracket("read", {}, () => api.read());
        rows.push({
          figure: "B1 GET /subscriptions/{id} req/s",
          baseline: [before.req_per_s!, after.req_per_s!],
          service: result.values.req_per_s!,
          sense: "higher",
          target: 0.3,
          unit: "req/s",
          correctness: result.correctness,
          ok: result.ok,
        });
        rows.push({
          figure: "B1 p99",
          baseline: [before.p99_ms!, after.p99_ms!],
          service: result.values.p99_ms!,
          sense: "lower",
          target: 5,
          unit: "ms",
          correctness: result.correctness,
          ok: result.ok,
        });
        const v = result.values;
        notes.push(
          `RSS after B1${figures.includes("create") ? " + B3" : ""}: ${v.rss_mib} MiB (target ≤ 350 MiB; bench process = service + seeding; ` +
            `${v.rss_idle_mib} MiB once started, before any load; V8 heap ${v.heap_used_mib} used of ${v.heap_total_mib} MiB, external ${v.external_mib} MiB. ` +
            `V8 keeps the pages its heap once grew to, so RSS shows the peak heap: npm scripts run node with ${process.execArgv.filter((a) => a.startsWith("--max-semi") || a.startsWith("--heap-growing")).join(" ") || "no heap flags"})`,
        );
      }
    } finally {
      await api.close();
    }
  }
  if (figures.includes("expiry")) {
    const env = { BENCH_DELAYED_JOBS: String(EXPIRY), BENCH_QUEUE_JOBS: "2000", BENCH_QUEUE_SEQ_JOBS: "200" };
    const { before, after, result } = await bracket("queue", env, () => expiryFigure(EXPIRY));
    rows.push({
      figure: `B6 expiry lag p99 (${EXPIRY} due at once)`,
      baseline: [before.lag_p99_ms!, after.lag_p99_ms!],
      service: result.values.lag_p99_ms!,
      sense: "absolute",
      target: 2000,
      unit: "ms",
      correctness: result.correctness,
      ok: result.ok,
    });
  }
  if (figures.includes("webhooks")) {
    const env = { BENCH_WEBHOOKS: String(WEBHOOK_EVENTS) };
    const { before, after, result } = await bracket("webhooks", env, () => webhooksFigure(WEBHOOK_EVENTS, WEBHOOK_MAX_IN_FLIGHT));
    rows.push({
      figure: `B7 webhooks/s (${WEBHOOK_EVENTS} events, 1 endpoint)`,
      baseline: [before.deliveries_per_s!, after.deliveries_per_s!],
      service: result.values.deliveries_per_s!,
      sense: "higher",
      target: 0.2,
      unit: "/s",
      correctness: result.correctness,
      ok: result.ok,
    });
  }
  if (figures.includes("webhooks-split")) {
    const env = { BENCH_WEBHOOKS: String(WEBHOOK_EVENTS) };
    for (const maxInFlight of [undefined, WEBHOOK_MAX_IN_FLIGHT]) {
      const { before, after, result } = await bracket("webhooks", env, () => splitWebhooksFigure(WEBHOOK_EVENTS, maxInFlight));
      rows.push({
        figure: `B7 webhooks/s split roles, ${maxInFlight === undefined ? "endpoint defaults" : `maxInFlight ${maxInFlight}`}`,
        baseline: [before.deliveries_per_s!, after.deliveries_per_s!],
        service: result.values.deliveries_per_s!,
        sense: "higher",
        target: maxInFlight === undefined ? 0.3 : 0.5,
        unit: "/s",
        correctness: result.correctness,
        ok: result.ok,
      });
    }
  }
  if (figures.includes("renewals")) {
    const env = { BENCH_RENEWALS: String(RENEWALS) };
    const { before, after, result } = await bracket("renewals", env, () => renewalsFigure(RENEWALS));
    rows.push({
      figure: `B8 renewals seconds (${RENEWALS} due)`,
      baseline: [before.seconds!, after.seconds!],
      service: result.values.seconds!,
      sense: "lower",
      target: 5,
      unit: "s",
      correctness: result.correctness,
      ok: result.ok,
    });
  }
} finally {
  print();
  await dropTemplate();
}
