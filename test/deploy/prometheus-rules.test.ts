import { expect } from "chai";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parse } from "yaml";
import { createMetrics } from "../../services/platform/observability/metrics.ts";

const run = promisify(execFile);
const DEPLOY = fileURLToPath(new URL("../../deploy/", import.meta.url));

/** promtool is the Debian package `prometheus` (.ci/run installs it); a developer without it skips, CI never does. */
async function promtool(this: Mocha.Context, ...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run("promtool", args, { cwd: DEPLOY });
    return stdout + stderr;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === "ENOENT" && !process.env.CI) this.skip();
    throw new Error(`promtool ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? e.message}`);
  }
}

/** Metric names a PromQL expression uses that this code base exports (billing_*, the OTel-named RED metrics, Node's). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b(billing_[a-z_]+|http_server_[a-z_]+|rpc_server_[a-z_]+|process_[a-z_]+|nodejs_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
}

/** Every series name /metrics can expose: histogram families add _bucket, _count and _sum. */
async function exportedNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === "histogram") for (const s of ["_bucket", "_count", "_sum"]) names.add(m.name + s);
  }
  return names;
}

describe("deploy/prometheus and deploy/grafana", () => {
  it("promtool check rules: alerts.yml", async function () {
    expect(await promtool.call(this, "check", "rules", "prometheus/alerts.yml")).to.contain("SUCCESS");
  });

  it("promtool test rules: the alerts' unit tests pass", async function () {
    expect(await promtool.call(this, "test", "rules", "prometheus/alerts.test.yml")).to.contain("SUCCESS");
  });

  it("promtool check config: the compose Prometheus scrapes every role", async function () {
    expect(await promtool.call(this, "check", "config", "prometheus/prometheus.yml")).to.contain("SUCCESS");
    const config = parse(await readFile(`${DEPLOY}prometheus/prometheus.yml`, "utf8"));
    expect(config.scrape_configs.map((s: { job_name: string }) => s.job_name)).to.deep.equal(["billing-gateway", "billing-services", "billing-workers"]);
  });

  it("alerts cover lag, failed jobs, 5xx, readiness, disabled endpoints, reconciliation, the pool and retention contention, on metrics we export", async () => {
    const alerts = parse(await readFile(`${DEPLOY}prometheus/alerts.yml`, "utf8"));
    const rules: { alert: string; expr: string }[] = alerts.groups.flatMap((g: { rules: unknown[] }) => g.rules);
    const exported = await exportedNames();
    for (const rule of rules) {
      for (const name of metricNames(rule.expr)) expect(exported.has(name), `${rule.alert} uses ${name}`).to.equal(true);
    }
    const uses = (metric: string) => rules.some((r) => r.expr.includes(metric));
    for (const metric of [
      "billing_due_work_lag_seconds",
      'outcome="failed"',
      'http_response_status_code=~"5.."',
      "billing_ready",
      "billing_webhook_endpoints_disabled_total",
      "billing_reconciliation_anomalies_total",
      'billing_db_pool_connections{state="waiting"}',
      "billing_retention_contention_total",
    ]) {
      expect(uses(metric), metric).to.equal(true);
    }
  });

  it("no exported metric has a label Prometheus sets itself on scrape (job, instance): it would be stored as exported_*", async () => {
    // prom-client keeps each metric's declared label names on the metric object (not in its typings).
    const declared = createMetrics()
      .registry.getMetricsAsArray()
      .map((m) => ({ name: m.name, labels: (m as unknown as { labelNames: string[] }).labelNames }));
    expect(declared.find((m) => m.name === "billing_job_duration_seconds")?.labels).to.deep.equal(["job_name", "outcome"]);
    for (const m of declared) for (const reserved of ["job", "instance"]) expect(m.labels, `${m.name} has a ${reserved} label`).not.to.include(reserved);
  });

  it("the Grafana dashboard is valid JSON whose queries use only metrics we export", async () => {
    const dashboard = JSON.parse(await readFile(`${DEPLOY}grafana/billing.json`, "utf8"));
    const exported = await exportedNames();
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).to.be.greaterThan(15);
    for (const expr of exprs) for (const name of metricNames(expr)) expect(exported.has(name), `dashboard uses ${name}`).to.equal(true);
    const all = exprs.join("\n");
    for (const metric of [
      "http_server_request_duration_seconds",
      "rpc_server_call_duration_seconds",
      "billing_queue_jobs",
      "billing_due_work_lag_seconds",
      "billing_charges_total",
      "billing_webhook_attempts_total",
      "billing_db_pool_connections",
      "process_resident_memory_bytes",
    ]) {
      expect(all, metric).to.contain(metric);
    }
  });
});
