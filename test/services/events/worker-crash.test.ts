import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { eventually } from "../../support/eventually.ts";
import { emitEvents } from "../../support/events.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

describe("webhooks when a worker process is killed mid-batch", () => {
  let sys: TestSystem;
  let receiver: WebhookReceiver;
  let worker: ChildProcess | undefined;

  /** `billing start webhooks` as its own process, on this test's database and queue prefix. */
  function startWorkerProcess(): ChildProcess {
    const child = spawn(process.execPath, ["cli/billing.ts", "start", "webhooks"], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: sys.config.databaseUrl,
        REDIS_URL: sys.config.redisUrl,
        QUEUE_PREFIX: sys.config.queuePrefix,
        SANDBOX: "true",
        SWEEP_INTERVAL_MS: "300",
        WEBHOOK_TIMEOUT_MS: "1000",
        WEBHOOK_CONCURRENCY: "4",
        LOG_LEVEL: "error",
        METRICS_PORT: "0",
      },
    });
    return child;
  }

  async function kill(child: ChildProcess | undefined) {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }

  before(async () => {
    sys = await startTestSystem({ workerGroups: [] });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await kill(worker);
    await receiver?.close();
    await sys?.close();
  });

  it("delivers every event at least once after a SIGKILL and a restart", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Crash");
    const endpoints = [];
    // "one" keeps the one-at-a-time order; "two" takes up to 4 requests at once.
    endpoints.push((await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/one`, ordered: true })).body);
    endpoints.push((await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/two`, maxInFlight: 4 })).body);
    // A slowish receiver, so that the kill lands in the middle of the batch with a request in flight.
    receiver.respond = () => ({ status: 200, delayMs: 60 });
    const ids = await emitEvents(sys, merchantId, 25);

    worker = startWorkerProcess();
    await receiver.waitFor((r) => r.length >= 10, 20_000);
    await kill(worker);
    const beforeKill = receiver.received.length;
    expect(beforeKill).to.be.below(50);
    expect(await sys.sql("select id from webhook_deliveries where status = 'PENDING'")).to.not.have.length(0);

    worker = startWorkerProcess();
    await eventually(
      async () => {
        const pending = await sys.sql("select id from webhook_deliveries where status <> 'SUCCEEDED'");
        return pending.length === 0;
      },
      25_000,
      "every delivery succeeded",
    );
    await kill(worker);

    for (const [path, inFlight] of [
      ["/hooks/one", 1],
      ["/hooks/two", 4],
    ] as const) {
      const got = receiver.received.filter((x) => x.path === path).map((x) => String(x.headers["webhook-id"]));
      expect(new Set(got), path).to.deep.equal(new Set(ids)); // every event, at least once
      expect(got.length - ids.length, `${path} duplicates`).to.be.at.most(inFlight); // only those in flight at the kill
    }
    // The attempt cut short by the kill is on record.
    const attempts = await sys.sql<{ outcome: string; n: string }>("select outcome, count(*) as n from webhook_delivery_attempts group by outcome");
    const byOutcome = Object.fromEntries(attempts.map((a) => [a.outcome, Number(a.n)]));
    expect(byOutcome.SUCCEEDED).to.equal(50);
    expect(byOutcome.IN_PROGRESS ?? 0).to.equal(0);
    expect(byOutcome.INTERRUPTED ?? 0).to.be.at.most(1 + 4); // only requests that were in flight at the kill
  });
});
