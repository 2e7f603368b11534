/**
 * Webhook delivery throughput (a benchmark, not a test): events are committed
 * first, then the `webhooks` worker group starts and the clock runs until the
 * local receiver has every delivery. Then one event at a time, for latency
 * (commit → received, which includes the relay poll).
 * Run with DATABASE_URL/REDIS_URL set: `node test/bench/webhooks.ts`
 * (BENCH_EVENTS, BENCH_ENDPOINTS, WEBHOOK_CONCURRENCY to vary).
 */
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";
import { startWebhookReceiver } from "../support/webhook-receiver.ts";
import { startWebhookWorkers } from "../support/webhook-workers.ts";
import { recordEvent } from "../../services/events/record-event.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const CONCURRENCY = process.env.WEBHOOK_CONCURRENCY ?? "10";

async function scenario(endpointCount: number, events: number) {
  const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20", WEBHOOK_CONCURRENCY: CONCURRENCY, SWEEP_INTERVAL_MS: "1000" } });
  const receiver = await startWebhookReceiver();
  try {
    const { id: merchantId, api } = await sys.createMerchant("Bench");
    for (let i = 0; i < endpointCount; i++) await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/${i}` });
    const ctx = sys.context();
    await ctx.em.transactional(async (em) => {
      for (let i = 0; i < events; i++) {
        recordEvent(em, ctx.clock, {
          merchantId,
          type: "subscription.charge_succeeded",
          data: { id: `sub_${i}`, amount: "9.99", currency: "USD", status: "ACTIVE" },
        });
      }
    });
    const expected = events * endpointCount;
    const started = performance.now();
    const workers = await startWebhookWorkers(sys);
    await receiver.waitFor((r) => r.length >= expected, 600_000);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${String(endpointCount).padStart(2)} endpoint(s) × ${events} events: ${expected} deliveries in ${seconds.toFixed(2)} s = ` +
        `${(expected / seconds).toFixed(0)} deliveries/s (concurrency ${CONCURRENCY}, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB)`,
    );

    // Latency, one event at a time: commit → received.
    const latencies: number[] = [];
    for (let i = 0; i < 30; i++) {
      const before = receiver.received.length;
      const t = performance.now();
      await ctx.em.fork().transactional(async (em) => {
        recordEvent(em, ctx.clock, { merchantId, type: "subscription.renewed", data: { i } });
      });
      await receiver.waitFor((r) => r.length >= before + endpointCount, 30_000);
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);
    console.log(
      `   commit → received, single events: p50 ${latencies[15]!.toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms (relay polls every ${Math.min(sys.config.sweepIntervalMs, 500)} ms)`,
    );
    await workers.close();
  } finally {
    await receiver.close();
    await sys.close();
  }
}

console.log(`node ${process.version}`);
await scenario(1, EVENTS);
await scenario(Number(process.env.BENCH_ENDPOINTS ?? 8), EVENTS);
await dropTemplate();
