import { expect } from "chai";
import { type TestSystem, useTestSystem } from "../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { eventually } from "../support/eventually.ts";
import { emitEvents } from "../support/events.ts";

/** Production mode: SANDBOX=false, so the SSRF rule applies unless WEBHOOK_ALLOW_PRIVATE=true. */
function productionSystem(extraEnv: Record<string, string> = {}): TestSystem {
  return useTestSystem({
    workerGroups: ["webhooks"],
    env: { SANDBOX: "false", WEBHOOK_RETRY_SCHEDULE: "0.1", SWEEP_INTERVAL_MS: "300", ...extraEnv },
  });
}

describe("webhook SSRF rule in production mode", () => {
  let receiver: WebhookReceiver;

  const sys = productionSystem();
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  it("accepts the URL but refuses to send to loopback or private addresses, recording why", async () => {
    expect(sys.config.sandbox).to.equal(false);
    const { id: merchantId, api } = await sys.createMerchant("Prod");
    const targets = [receiver.url, `http://localhost:${receiver.port}/hooks`, "http://169.254.169.254/latest/meta-data/", "http://10.0.0.7/hook"];
    const endpoints: { id: string; url: string }[] = [];
    for (const url of targets) {
      const res = await api.post("/api/v1/webhook-endpoints", { url });
      expect(res.status, url).to.equal(201);
      endpoints.push(res.body);
    }
    await emitEvents(sys, merchantId, 1);
    for (const ep of endpoints) {
      const failed = await eventually(
        async () => {
          const res = await api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`);
          return res.body.data[0]?.status === "FAILED" ? res.body.data[0] : undefined;
        },
        10_000,
        `delivery to ${ep.url} failed`,
      );
      expect(failed.attempts).to.have.length(2); // first attempt + one retry (WEBHOOK_RETRY_SCHEDULE=0.1)
      for (const a of failed.attempts) {
        expect(a.outcome).to.equal("FAILED");
        expect(a.statusCode).to.equal(null);
        expect(a.error).to.match(/^refused: .* resolves to .*, a (loopback|linkLocal|private) address/);
      }
    }
    expect(receiver.received).to.have.length(0);
  });
});

describe("webhook SSRF rule lifted by WEBHOOK_ALLOW_PRIVATE=true", () => {
  let receiver: WebhookReceiver;

  const sys = productionSystem({ WEBHOOK_ALLOW_PRIVATE: "true" });
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  it("delivers to a loopback receiver", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Prod allowed");
    await api.post("/api/v1/webhook-endpoints", { url: receiver.url });
    const [eventId] = await emitEvents(sys, merchantId, 1);
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === eventId));
  });
});
