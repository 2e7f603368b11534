/**
 * `npm run bench` (issue 16): each figure against its bare-code baseline from
 * ../shared/bench, bracketed baseline → service → baseline in one run;
 * ratio = service ÷ mean of the two baselines. `npm run bench -- renewals`
 * runs one (names: create read create-split read-split rss expiry webhooks webhooks-split renewals). Not part of CI.
 * webhooks-split, create-split, read-split: the deployed shape, each role its own process (split-figures.ts);
 * create, read, rss: one `npm start` process (the all-in-one shape, default settings); rss reads its resident
 * memory from /proc after B3 + B1.
 * Targets are issue 27's. Knobs: BENCH_EXPIRY (10000), BENCH_WEBHOOK_EVENTS (5000), BENCH_WEBHOOK_MAX_IN_FLIGHT (50), BENCH_RENEWALS
 * (10000), BENCH_DURATION/BENCH_WARMUP/BENCH_CONNECTIONS (the baselines'
 * autocannon shape, also used for the service), BENCH_BASELINES_DIR.
 * Needs DATABASE_URL and REDIS_URL (the test infrastructure).
 */
import { dropTemplate } from "../support/database.ts";
import { benchPgUrl, runBaseline, type BaselineName } from "./baselines.ts";
import { expiryFigure, renewalsFigure, webhooksFigure, type FigureResult } from "./figures.ts";
import { SplitApiFigures, splitWebhooksFigure } from "./split-figures.ts";

const ALL = ["create", "read", "create-split", "read-split", "rss", "expiry", "webhooks", "webhooks-split", "renewals"] as const;
type Figure = (typeof ALL)[number];
const asked = process.argv.slice(2).filter((a) => a !== "--");
const bad = asked.filter((a) => !ALL.includes(a as Figure));
if (bad.length) throw new Error(`unknown figure(s) ${bad.join(", ")}; known: ${ALL.join(" ")}`);
const figures: Figure[] = asked.length ? (asked as Figure[]) : [...ALL];

const EXPIRY = Number(process.env.BENCH_EXPIRY ?? 10_000);
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

type Bracketed = Awaited<ReturnType<typeof bracket>>;

/** One table row from a bracketed run: `metric` read from both baselines and the service alike. */
function addRow(figure: string, { before, after, result }: Bracketed, metric: string, sense: Row["sense"], target: number, unit: string) {
  rows.push({
    figure,
    baseline: [before[metric]!, after[metric]!],
    service: result.values[metric]!,
    sense,
    target,
    unit,
    correctness: result.correctness,
    ok: result.ok,
  });
}

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
  if (figures.includes("create") || figures.includes("read") || figures.includes("rss")) {
    // All-in-one as an SRE runs it: one `npm start` process (dist/, package.json's flags, default settings), the
    // load from the baselines' generator in a process of its own. B3 creates the rows B1 reads; the RSS target
    // reads this process after both (without "create"/"read", the loads still run, unbracketed).
    const api = new SplitApiFigures("all");
    await api.start();
    try {
      const idle = (await api.memory())[0]!;
      let created: FigureResult;
      if (figures.includes("create")) {
        const run = await bracket("create", {}, () => api.create());
        created = run.result;
        addRow("B3 POST /subscriptions req/s", run, "req_per_s", "higher", 0.6, "req/s");
        notes.push(`B3 pgbench ceiling: ${run.before.pgbench_tps} / ${run.after.pgbench_tps} tps; service p99 ${fmt(created.values.p99_ms!)} ms`);
      } else created = await api.create();
      let read: FigureResult;
      if (figures.includes("read")) {
        const run = await bracket("read", {}, () => api.read());
        read = run.result;
        addRow("B1 GET /subscriptions/{id} req/s", run, "req_per_s", "higher", 0.6, "req/s");
        addRow("B1 p99", run, "p99_ms", "lower", 2, "ms");
      } else read = await api.read();
      const after = (await api.memory())[0]!;
      if (figures.includes("rss")) {
        // Not bracketed: an absolute target.
        rows.push({
          figure: "RSS of npm start after B3 + B1",
          baseline: [after.rss, after.rss],
          service: after.rss,
          sense: "absolute",
          target: 250,
          unit: "MiB",
          correctness: `create ${created.correctness}; read ${read.correctness}`,
          ok: created.ok && read.ok,
        });
      }
      notes.push(
        `npm start: RSS ${idle.rss} MiB once ready (${idle.heap}), ${after.rss} MiB after B3 (${fmt(created.values.req_per_s!)} req/s) + B1 (${fmt(read.values.req_per_s!)} req/s) (${after.heap}), peak ${after.peak} MiB. ` +
          "V8 keeps the pages its heap once grew to, so RSS shows the peak heap",
      );
    } finally {
      await api.close();
    }
  }
  if (figures.includes("create-split") || figures.includes("read-split")) {
    const api = new SplitApiFigures("split");
    await api.start();
    try {
      if (figures.includes("create-split")) {
        const run = await bracket("create", {}, () => api.create());
        addRow("B3 POST /subscriptions req/s, split roles", run, "req_per_s", "higher", 0.35, "req/s");
      }
      if (figures.includes("read-split")) {
        const run = await bracket("read", {}, () => api.read());
        addRow("B1 GET /subscriptions/{id} req/s, split roles", run, "req_per_s", "higher", 0.35, "req/s");
        addRow("B1 p99, split roles", run, "p99_ms", "lower", 4, "ms");
      }
      notes.push(`split roles after the load: ${(await api.memory()).map((m) => `${m.name} RSS ${m.rss} MiB (peak ${m.peak})`).join(", ")}`);
    } finally {
      await api.close();
    }
  }
  if (figures.includes("expiry")) {
    const env = { BENCH_DELAYED_JOBS: String(EXPIRY), BENCH_QUEUE_JOBS: "2000", BENCH_QUEUE_SEQ_JOBS: "200" };
    const run = await bracket("queue", env, () => expiryFigure(EXPIRY));
    addRow(`B6 expiry lag p99 (${EXPIRY} due at once)`, run, "lag_p99_ms", "absolute", 1000, "ms");
  }
  if (figures.includes("webhooks")) {
    const env = { BENCH_WEBHOOKS: String(WEBHOOK_EVENTS) };
    const run = await bracket("webhooks", env, () => webhooksFigure(WEBHOOK_EVENTS, WEBHOOK_MAX_IN_FLIGHT));
    addRow(`B7 webhooks/s (${WEBHOOK_EVENTS} events, 1 endpoint)`, run, "deliveries_per_s", "higher", 0.2, "/s");
  }
  if (figures.includes("webhooks-split")) {
    const env = { BENCH_WEBHOOKS: String(WEBHOOK_EVENTS) };
    for (const maxInFlight of [undefined, WEBHOOK_MAX_IN_FLIGHT]) {
      const run = await bracket("webhooks", env, () => splitWebhooksFigure(WEBHOOK_EVENTS, maxInFlight));
      addRow(
        `B7 webhooks/s split roles, ${maxInFlight === undefined ? "endpoint defaults" : `maxInFlight ${maxInFlight}`}`,
        run,
        "deliveries_per_s",
        "higher",
        maxInFlight === undefined ? 0.3 : 0.5,
        "/s",
      );
    }
  }
  if (figures.includes("renewals")) {
    const env = { BENCH_RENEWALS: String(RENEWALS) };
    const run = await bracket("renewals", env, () => renewalsFigure(RENEWALS));
    addRow(`B8 renewals seconds (${RENEWALS} due)`, run, "seconds", "lower", RENEWALS > 10_000 ? 3 : 2, "s");
  }
} finally {
  print();
  await dropTemplate();
}
