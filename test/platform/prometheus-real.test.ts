import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, parse } from "yaml";
import { startSystem, type RunningSystem } from "../../cli/system.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { ADMIN_KEY, startTestSystem, type TestSystem } from "../support/system.ts";
import { apiClient } from "../support/http.ts";
import { approvedSubscription } from "../support/billing.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { startPrometheus, type PrometheusServer } from "../support/prometheus-server.ts";
import { analyse } from "../support/promql.ts";

const DEPLOY = fileURLToPath(new URL("../../deploy/", import.meta.url));
const ALERTS = `${DEPLOY}prometheus/alerts.yml`;

interface Query {
  /** Where it comes from (alert name, dashboard panel). */
  source: string;
  expr: string;
}

const alertQueries = (): Query[] =>
  parse(readFileSync(ALERTS, "utf8")).groups.flatMap((g: { rules: { alert: string; expr: string }[] }) =>
    g.rules.map((r) => ({ source: `alert ${r.alert}`, expr: r.expr })),
  );

/** Panel queries with Grafana's variables as the dashboard fills them ($job: every scrape job). */
function dashboardQueries(): Query[] {
  const dashboard = JSON.parse(readFileSync(`${DEPLOY}grafana/billing.json`, "utf8"));
  return dashboard.panels.flatMap((p: { title: string; targets?: { expr: string }[] }) =>
    (p.targets ?? []).map((t) => ({ source: `panel "${p.title}"`, expr: t.expr.replaceAll("$__rate_interval", "1m").replaceAll("$job", ".+") })),
  );
}

/** label_values(metric, label) of the dashboard's template variables. */
function dashboardVariables(): { metric: string; label: string }[] {
  const dashboard = JSON.parse(readFileSync(`${DEPLOY}grafana/billing.json`, "utf8"));
  return (dashboard.templating?.list ?? [])
    .map((v: { definition?: string }) => /^label_values\((\w+),\s*(\w+)\)$/.exec(v.definition ?? ""))
    .filter(Boolean)
    .map((m: RegExpExecArray) => ({ metric: m[1]!, label: m[2]! }));
}

/** The External metrics the HPAs of deploy/k8s scale on, with their label selectors. */
function hpaQueries(): Query[] {
  const queries: Query[] = [];
  for (const file of readdirSync(`${DEPLOY}k8s`).filter((f) => f.endsWith(".yaml"))) {
    for (const doc of parseAllDocuments(readFileSync(`${DEPLOY}k8s/${file}`, "utf8")).map((d) => d.toJS())) {
      if (doc?.kind !== "HorizontalPodAutoscaler") continue;
      for (const m of doc.spec.metrics ?? []) {
        if (m.type !== "External") continue;
        const labels = Object.entries(m.external.metric.selector?.matchLabels ?? {}).map(([k, v]) => `${k}="${v}"`);
        // As prometheus-adapter's metricsQuery asks it (extras/prometheus-adapter-config.yaml).
        queries.push({ source: `HPA ${doc.metadata.name}`, expr: `max by (kind) (${m.external.metric.name}{${labels.join(",")}})` });
      }
    }
  }
  return queries;
}

/**
 * The real `prometheus` binary (Debian package; .ci/run installs it) scrapes every role of a split
 * deployment (gateway, services, two worker processes) after some load, loads alerts.yml, and answers
 * every alert expression, dashboard query and HPA metric through its HTTP API. It catches what
 * promtool's unit tests cannot, since they feed labels directly: a label Prometheus overwrites on
 * scrape (ours stored as exported_job), a series no role exports, a `by (...)` label missing from
 * the series (every series collapses into one).
 */
describe("operations: alerts and dashboards under a real Prometheus", function () {
  this.timeout(120_000);
  let services: TestSystem | undefined;
  const roles: RunningSystem[] = [];
  let receiver: WebhookReceiver | undefined;
  let prometheus: PrometheusServer | undefined;
  let rpc: ReturnType<typeof subscriptionsRpc> | undefined;

  before(async function () {
    // A developer without the binary skips; CI never does.
    if (spawnSync("prometheus", ["--version"]).error) {
      if (!process.env.CI) this.skip();
      throw new Error("the prometheus binary (Debian package prometheus) is missing");
    }

    receiver = await startWebhookReceiver();
    services = await startTestSystem({ gateway: false, workerGroups: [] });
    const config = services.system.config;
    const logger = createLogger(config.logLevel);
    const start = async (parts: Pick<Parameters<typeof startSystem>[2], "gateway" | "workerGroups">) => {
      const role = await startSystem(config, logger, { services: [], ...parts, gatewayPort: 0, metricsPort: 0 });
      roles.push(role);
      return role;
    };
    const gateway = await start({ gateway: true, workerGroups: [] });
    const workers = await start({ gateway: false, workerGroups: ["scheduler", "renewals", "payments"] });
    const webhooks = await start({ gateway: false, workerGroups: ["webhooks", "emails"] });

    // Load, so that HTTP, RPC, charge, job and webhook series exist.
    const baseUrl = `http://127.0.0.1:${gateway.gatewayPort}`;
    const admin = apiClient(baseUrl, { "x-admin-key": ADMIN_KEY });
    const created = await admin.post("/admin/v1/merchants", { name: "Scraped" });
    expect(created.status).to.equal(201);
    const api = apiClient(baseUrl, { "x-api-key": created.body.apiKey });
    expect((await api.post("/api/v1/webhook-endpoints", { url: receiver.url })).status).to.equal(201);
    rpc = subscriptionsRpc(services);
    await approvedSubscription({ ...services, admin }, api, rpc.client, { plan: { amount: "5" } });
    expect((await api.get("/api/v1/subscriptions/00000000-0000-4000-8000-000000000000")).status).to.equal(404);
    expect((await api.request("POST", "/api/v1/subscription-plans", { raw: "{not json", headers: { "content-type": "application/json" } })).status).to.equal(
      400,
    );
    await receiver.waitFor((r) => r.length > 0, 20_000);

    prometheus = await startPrometheus({
      jobs: {
        "billing-gateway": [`127.0.0.1:${gateway.metricsPort}`],
        "billing-services": [`127.0.0.1:${services.system.metricsPort}`],
        "billing-workers": [`127.0.0.1:${workers.metricsPort}`, `127.0.0.1:${webhooks.metricsPort}`],
      },
      ruleFiles: [ALERTS],
    });
    // Every target scraped since the load, and every rule evaluated once.
    await eventually(
      async () => {
        const up = await prometheus!.query("up == 1");
        if (up.data?.result.length !== 4) return undefined;
        const webhookJobs = await prometheus!.series('billing_job_duration_seconds_count{outcome="completed"}');
        if (webhookJobs.length === 0) return undefined;
        const { groups } = await prometheus!.api<{ groups: { rules: { lastEvaluation: string }[] }[] }>("rules");
        return groups.every((g) => g.rules.every((r) => !r.lastEvaluation.startsWith("0001"))) ? true : undefined;
      },
      30_000,
      `Prometheus to scrape every role and evaluate the rules:\n${prometheus.log()}`,
    );
  });

  after(async () => {
    await prometheus?.stop();
    rpc?.close();
    for (const role of roles.reverse()) await role.close();
    await services?.close();
    await receiver?.close();
  });

  it("no series carries a label Prometheus renamed on scrape (exported_job, exported_instance)", async () => {
    const labels = await prometheus!.api<string[]>("labels");
    expect(labels.filter((l) => l.startsWith("exported_"))).to.deep.equal([]);
    expect(labels).to.include("job_name");
  });

  it("alerts.yml loads into Prometheus and every rule evaluates cleanly", async () => {
    const { groups } = await prometheus!.api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>("rules");
    const rules = groups.flatMap((g) => g.rules);
    expect(rules.length).to.equal(alertQueries().length);
    expect(rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.lastError}`)).to.deep.equal([]);
  });

  for (const [what, queries] of [
    ["alert expression", alertQueries],
    ["dashboard panel query", dashboardQueries],
  ] as const) {
    it(`every ${what} evaluates, names series that exist, and groups by labels those series have`, async () => {
      const problems = await checkQueries(prometheus!, queries());
      expect(problems).to.deep.equal([]);
    });
  }

  it("the dashboard's variables have values", async () => {
    for (const { metric, label } of dashboardVariables()) {
      const values = await prometheus!.api<string[]>(`label/${label}/values?${new URLSearchParams({ "match[]": metric })}`);
      expect(values, `label_values(${metric}, ${label})`).to.include.members(["billing-gateway", "billing-services", "billing-workers"]);
    }
  });

  it("every HPA's external metric has a value for its selector, as prometheus-adapter asks for it", async () => {
    const queries = hpaQueries();
    expect(queries.length).to.be.greaterThan(5);
    for (const q of queries) {
      const answer = await prometheus!.query(q.expr);
      expect(answer.status, `${q.source}: ${q.expr}`).to.equal("success");
      expect(answer.data!.result, `${q.source}: ${q.expr}`).to.have.length(1);
    }
  });
});

/** What is wrong with each query, against what Prometheus stored: empty when nothing. */
async function checkQueries(prometheus: PrometheusServer, queries: Query[]): Promise<string[]> {
  const problems: string[] = [];
  const labelsOf = new Map<string, Set<string>>();
  const seriesLabels = async (metric: string) => {
    if (!labelsOf.has(metric)) labelsOf.set(metric, new Set((await prometheus.series(metric)).flatMap((s) => Object.keys(s))));
    return labelsOf.get(metric)!;
  };
  for (const { source, expr } of queries) {
    const answer = await prometheus.query(expr);
    if (answer.status !== "success") problems.push(`${source}: ${answer.error}`);
    const { selectors, groupings } = analyse(expr);
    if (selectors.length === 0) problems.push(`${source}: no metric found in ${expr}`);
    for (const s of selectors) {
      const labels = await seriesLabels(s.metric);
      if (labels.size === 0) problems.push(`${source}: no series ${s.metric}`);
      else for (const l of s.labels) if (!labels.has(l)) problems.push(`${source}: ${s.metric} has no label ${l} to match on`);
    }
    for (const g of groupings) {
      for (const metric of g.metrics) {
        const labels = await seriesLabels(metric);
        for (const l of g.labels) if (labels.size > 0 && !labels.has(l)) problems.push(`${source}: ${metric} has no label ${l}, so "${g.text}" collapses`);
      }
    }
  }
  return problems;
}
