import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { ADMIN_KEY, useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { startWebhookReceiver, type WebhookReceiver, type ReceivedWebhook } from "../support/webhook-receiver.ts";
import { eventually } from "../support/eventually.ts";
import { emitEvents, waitUntilRelayed } from "../support/events.ts";
import { settle } from "../support/sweeps.ts";

const headersOf = (r: ReceivedWebhook) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"]),
});

describe("webhooks over REST (signed delivery, retries, 410, rotation)", function () {
  let receiver: WebhookReceiver;
  let merchant: { id: string; api: ApiClient };
  let other: { id: string; api: ApiClient };

  const sys = useTestSystem({
    workerGroups: ["webhooks"],
    env: { WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.2", WEBHOOK_TIMEOUT_MS: "800", SWEEP_INTERVAL_MS: "300" },
  });
  before(async () => {
    receiver = await startWebhookReceiver();
    merchant = await sys.createMerchant("Hooks");
    other = await sys.createMerchant("Other");
  });
  after(async () => {
    await receiver?.close();
  });

  /** A fresh endpoint on its own receiver path, so tests do not see each other's deliveries. */
  async function endpoint(path: string, body: Record<string, unknown> = {}) {
    const res = await merchant.api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/${path}`, ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; secret: string; url: string };
  }

  // Whatever a test left (it failed before its own delete, or that delete met a loaded machine's timeout), the next
  // test starts with no endpoint of the merchant: a leftover would receive the next test's events and fail it.
  afterEach(async () => {
    for (let tries = 0; tries < 5; tries++) {
      const left = (await merchant.api.get("/api/v1/webhook-endpoints?limit=100")).body?.data ?? [];
      if (left.length === 0) return;
      for (const ep of left as { id: string }[]) await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
    }
    throw new Error("webhook endpoints could not be deleted between tests");
  });

  it("creates an endpoint: 201 with the secret once, then lists and gets it without the secret", async () => {
    const res = await merchant.api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/create`, description: "main" });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ object: "webhook_endpoint", url: `${receiver.url}/create`, status: "ENABLED", description: "main", disabledReason: null });
    expect(res.body.enabledEvents).to.deep.equal(["*"]);
    expect(res.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await merchant.api.get(`/api/v1/webhook-endpoints/${res.body.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.not.have.property("secret");
    expect(got.text).to.not.include(res.body.secret.slice(6));
    const list = await merchant.api.get("/api/v1/webhook-endpoints");
    expect(list.status).to.equal(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).to.include(res.body.id);
    expect(list.text).to.not.include(res.body.secret.slice(6));
    // The secret is encrypted at rest: its text appears nowhere in the row.
    const [row] = await sys.sql("select * from webhook_endpoints where id = ?", [res.body.id]);
    expect(JSON.stringify(row)).to.not.include(res.body.secret.slice(6));
    expect((await merchant.api.delete(`/api/v1/webhook-endpoints/${res.body.id}`)).status).to.equal(204);
  });

  it("refuses bad endpoint input with 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ url: "ftp://example.com/x" }, "url"],
      [{ url: "/relative/path" }, "url"],
      [{ url: "not a url" }, "url"],
      [{ url: "https://user:pw@example.com/x" }, "url"],
      [{ url: `https://example.com/${"a".repeat(2048)}` }, "url"],
      [{}, "url"],
      [{ url: "https://example.com", enabledEvents: ["no.such_type"] }, "enabledEvents"],
      [{ url: "https://example.com", enabledEvents: [] }, "enabledEvents"],
      [{ url: "https://example.com", enabledEvents: ["*", "plan.created"] }, "enabledEvents"],
      [{ url: "https://example.com", enabledEvents: ["plan.created", "plan.created"] }, "enabledEvents"],
      [{ url: "https://example.com", description: "x".repeat(501) }, "description"],
      [{ url: "https://example.com", secret: "whsec_mine" }, "secret"],
    ];
    for (const [body, field] of cases) {
      const res = await merchant.api.post("/api/v1/webhook-endpoints", body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message, JSON.stringify(body)).to.include(field);
    }
  });

  it("answers 404 for another merchant's endpoint and event, as for a missing one", async () => {
    const ep = await endpoint("isolation");
    const [eventId] = await emitEvents(sys, merchant.id, 1);
    for (const [method, path] of [
      ["GET", `/api/v1/webhook-endpoints/${ep.id}`],
      ["DELETE", `/api/v1/webhook-endpoints/${ep.id}`],
      ["POST", `/api/v1/webhook-endpoints/${ep.id}/rotate-secret`],
      ["POST", `/api/v1/webhook-endpoints/${ep.id}/enable`],
      ["GET", `/api/v1/webhook-endpoints/${ep.id}/deliveries`],
      ["GET", `/api/v1/events/${eventId}`],
      ["POST", `/api/v1/events/${eventId}/redeliver`],
      ["GET", "/api/v1/webhook-endpoints/not-a-uuid"],
    ] as const) {
      const res = await other.api.request(method, path);
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.error).to.match(/_NOT_FOUND$/);
    }
    const redeliverElsewhere = await other.api.post(`/api/v1/events/${eventId}/redeliver`, { endpointId: ep.id });
    expect(redeliverElsewhere.status).to.equal(404);
    expect((await other.api.get("/api/v1/webhook-endpoints")).body.data).to.deep.equal([]);
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("delivers a real event signed per Standard Webhooks: standardwebhooks verifies it and the body is the event", async () => {
    const ep = await endpoint("signed");
    const plan = await merchant.api.post("/api/v1/subscription-plans", { name: "Gold", amount: "12.50", currency: "USD", interval: "MONTH" });
    expect(plan.status).to.equal(201);
    await receiver.waitFor((r) => r.some((x) => x.body.includes(plan.body.id)));
    const hook = receiver.received.find((x) => x.body.includes(plan.body.id))!;
    expect(hook.path).to.equal("/hooks/signed");
    const payload = new Webhook(ep.secret).verify(hook.body, headersOf(hook)) as { id: string; type: string; data: { id: string } };
    expect(payload.type).to.equal("plan.created");
    expect(payload.data.id).to.equal(plan.body.id);
    expect(hook.headers["webhook-id"]).to.equal(payload.id);
    expect(hook.headers["content-type"]).to.equal("application/json");
    expect(Math.abs(Number(hook.headers["webhook-timestamp"]) - Date.now() / 1000)).to.be.below(30);
    expect(String(hook.headers["webhook-signature"]).split(" ")).to.have.length(1);
    // A tampered body does not verify.
    expect(() => new Webhook(ep.secret).verify(hook.body.replace("Gold", "Lead"), headersOf(hook))).to.throw();
    // The body is the event as the API returns it.
    const event = await merchant.api.get(`/api/v1/events/${payload.id}`);
    expect(event.status).to.equal(200);
    expect(JSON.parse(hook.body)).to.deep.equal(event.body);
    expect(event.body.data).to.deep.include({ id: plan.body.id, amount: "12.5", name: "Gold" });
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("retries a 500 on the schedule with the same id and byte-identical body, and records every attempt", async () => {
    const ep = await endpoint("retry500");
    let calls = 0;
    receiver.respond = (r) => (r.headers["webhook-id"] && r.body.includes('"retry500"') ? { status: ++calls <= 2 ? 500 : 200, body: "nope" } : { status: 200 });
    const [eventId] = await emitEvents(sys, merchant.id, 1, "plan.created", () => ({ tag: "retry500" }));
    const hooks = await receiver.waitFor((r) => r.filter((x) => x.headers["webhook-id"] === eventId).length >= 3);
    const mine = hooks.filter((x) => x.headers["webhook-id"] === eventId);
    expect(mine).to.have.length(3);
    expect(new Set(mine.map((m) => m.body)).size).to.equal(1);
    for (const m of mine) new Webhook(ep.secret).verify(m.body, headersOf(m));
    const deliveries = await eventually(async () => {
      const res = await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`);
      return res.body.data[0]?.status === "SUCCEEDED" ? res.body.data : undefined;
    });
    expect(deliveries).to.have.length(1);
    expect(deliveries[0]).to.include({ eventId, eventType: "plan.created", endpointId: ep.id, attemptCount: 3, lastStatusCode: 200, nextAttemptAt: null });
    expect(deliveries[0].attempts.map((a: { outcome: string }) => a.outcome)).to.deep.equal(["FAILED", "FAILED", "SUCCEEDED"]);
    expect(deliveries[0].attempts.map((a: { statusCode: number }) => a.statusCode)).to.deep.equal([500, 500, 200]);
    expect(deliveries[0].attempts[0]).to.include({ attemptNumber: 1, error: "the endpoint answered HTTP 500", responseExcerpt: "nope" });
    expect(deliveries[0].attempts[0].durationMs).to.be.a("number");
    receiver.respond = () => ({ status: 200 });
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("counts a timeout as a failed attempt, gives up after the last retry, and redelivers by hand", async () => {
    const ep = await endpoint("timeout");
    receiver.respond = (r) => (r.body.includes('"slowpoke"') ? { status: 200, delayMs: 2000 } : { status: 200 });
    const [eventId] = await emitEvents(sys, merchant.id, 1, "plan.created", () => ({ tag: "slowpoke" }));
    // 1 attempt + 3 retries (WEBHOOK_RETRY_SCHEDULE has 3 entries), then FAILED.
    const failed = await eventually(
      async () => {
        const res = await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries?status=FAILED`);
        return res.body.data[0];
      },
      20_000,
      "delivery failed",
    );
    expect(failed.attemptCount).to.equal(4);
    expect(failed.attempts).to.have.length(4);
    for (const a of failed.attempts) {
      expect(a.outcome).to.equal("FAILED");
      expect(a.error).to.equal("timed out after 800 ms");
      expect(a.statusCode).to.equal(null);
    }
    expect(failed.nextAttemptAt).to.equal(null);
    expect(receiver.received.filter((x) => x.headers["webhook-id"] === eventId)).to.have.length(4);

    receiver.respond = () => ({ status: 200 });
    const redelivered = await merchant.api.post(`/api/v1/events/${eventId}/redeliver`, { endpointId: ep.id });
    expect(redelivered.status, redelivered.text).to.equal(202);
    expect(redelivered.body.deliveries).to.have.length(1);
    expect(redelivered.body.deliveries[0]).to.include({ status: "PENDING", endpointId: ep.id });
    const done = await eventually(async () => {
      const res = await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries?eventId=${eventId}`);
      return res.body.data[0]?.status === "SUCCEEDED" ? res.body.data[0] : undefined;
    });
    expect(done.attemptCount).to.equal(5);
    expect(done.attempts.at(-1)).to.include({ attemptNumber: 5, outcome: "SUCCEEDED", statusCode: 200 });
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("disables an endpoint that answers 410 Gone (visible, with the reason) until it is re-enabled by hand", async () => {
    const ep = await endpoint("gone", { enabledEvents: ["subscription.cancelled"] });
    receiver.respond = (r) => (r.body.includes('"gone-test"') ? { status: 410 } : { status: 200 });
    const [first] = await emitEvents(sys, merchant.id, 1, "subscription.cancelled", () => ({ tag: "gone-test" }));
    const disabled = await eventually(async () => {
      const res = await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}`);
      return res.body.status === "DISABLED" ? res.body : undefined;
    });
    expect(disabled.disabledReason).to.equal(`the endpoint answered 410 Gone to event ${first}`);
    expect(disabled.disabledAt).to.be.a("string");
    const deliveries = (await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`)).body.data;
    expect(deliveries[0]).to.include({ status: "FAILED", attemptCount: 1, lastStatusCode: 410 });
    expect(receiver.received.filter((x) => x.headers["webhook-id"] === first)).to.have.length(1);

    // Nothing more is sent while disabled, and redelivering to it is refused.
    const [second] = await emitEvents(sys, merchant.id, 1, "subscription.cancelled", () => ({ tag: "after-gone" }));
    const refused = await merchant.api.post(`/api/v1/events/${second}/redeliver`, { endpointId: ep.id });
    expect(refused.status).to.equal(409);
    expect(refused.body.error).to.equal("WEBHOOK_ENDPOINT_DISABLED");
    // The relay has passed the event, then the sweeps ran and every job they queued: nothing was made for this endpoint, nothing sent.
    await waitUntilRelayed(sys, [second!]);
    await settle(sys);
    expect(await sys.sql("select id from webhook_deliveries where event_id = ? and endpoint_id = ?", [second, ep.id])).to.deep.equal([]);
    expect(receiver.received.filter((x) => x.headers["webhook-id"] === second)).to.have.length(0);

    receiver.respond = () => ({ status: 200 });
    const enabled = await merchant.api.post(`/api/v1/webhook-endpoints/${ep.id}/enable`);
    expect(enabled.status).to.equal(200);
    expect(enabled.body).to.include({ status: "ENABLED", disabledReason: null, disabledAt: null });
    const again = await merchant.api.post(`/api/v1/events/${second}/redeliver`, { endpointId: ep.id });
    expect(again.status).to.equal(202);
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === second));
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("signs with both secrets for 24 hours after a rotation (both verify), then with the new one only", async () => {
    const ep = await endpoint("rotate", { enabledEvents: ["subscription.paused"] });
    const rotated = await merchant.api.post(`/api/v1/webhook-endpoints/${ep.id}/rotate-secret`);
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret)
      .to.match(/^whsec_/)
      .and.not.equal(ep.secret);
    const grace = Date.parse(rotated.body.previousSecretExpiresAt) - Date.parse(rotated.body.updatedAt);
    expect(grace).to.equal(24 * 3600 * 1000);
    expect((await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}`)).body).to.not.have.property("secret");

    const [during] = await emitEvents(sys, merchant.id, 1, "subscription.paused");
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === during));
    const hook = receiver.received.find((x) => x.headers["webhook-id"] === during)!;
    const signatures = String(hook.headers["webhook-signature"]).split(" ");
    expect(signatures).to.have.length(2);
    expect(signatures.every((s) => s.startsWith("v1,"))).to.equal(true);
    new Webhook(rotated.body.secret).verify(hook.body, headersOf(hook));
    new Webhook(ep.secret).verify(hook.body, headersOf(hook));

    // 24 hours later (sandbox clock) the old secret no longer signs.
    const advanced = await sys.http.post("/admin/v1/sandbox/clock/advance", { seconds: 24 * 3600 + 1 }, { "x-admin-key": ADMIN_KEY });
    expect(advanced.status).to.equal(200);
    const [after] = await emitEvents(sys, merchant.id, 1, "subscription.paused");
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === after));
    const late = receiver.received.find((x) => x.headers["webhook-id"] === after)!;
    expect(String(late.headers["webhook-signature"]).split(" ")).to.have.length(1);
    new Webhook(rotated.body.secret).verify(late.body, headersOf(late));
    expect(() => new Webhook(ep.secret).verify(late.body, headersOf(late))).to.throw();
    // The timestamp header stays on the real clock although the service clock moved a day.
    expect(Math.abs(Number(late.headers["webhook-timestamp"]) - Date.now() / 1000)).to.be.below(30);
    expect(Date.parse(JSON.parse(late.body).createdAt) - Date.now()).to.be.above(23 * 3600 * 1000);
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("delivers an ordered endpoint's events in creation order, and a failing event does not hold the later ones back", async () => {
    const ep = await endpoint("order", { enabledEvents: ["subscription.resumed"], ordered: true });
    let failedOnce = false;
    receiver.respond = (r) => {
      if (r.body.includes('"n":3') && r.body.includes("subscription.resumed") && !failedOnce) {
        failedOnce = true;
        return { status: 503 };
      }
      return { status: 200 };
    };
    const ids = await emitEvents(sys, merchant.id, 8, "subscription.resumed");
    await receiver.waitFor((r) => r.filter((x) => ids.includes(String(x.headers["webhook-id"]))).length >= 9);
    // Every delivery has succeeded and nothing is left to run: no further request can come.
    await eventually(
      async () => {
        const rows = await sys.sql<{ status: string }>("select status from webhook_deliveries where endpoint_id = ?", [ep.id]);
        return rows.length === 8 && rows.every((r) => r.status === "SUCCEEDED");
      },
      15_000,
      "every delivery succeeded",
    );
    await settle(sys);
    const order = receiver.received.filter((x) => ids.includes(String(x.headers["webhook-id"]))).map((x) => ids.indexOf(String(x.headers["webhook-id"])));
    // First attempts in creation order, one at a time.
    expect([...new Set(order)]).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    // Event 3 failed once and came again later; event 4 went out in between instead of waiting for it.
    expect(order.filter((i) => i === 3)).to.have.length(2);
    expect(order.lastIndexOf(3)).to.be.above(order.indexOf(4));
    expect(receiver.received.filter((x) => x.path === "/hooks/order")).to.have.length(9);
    receiver.respond = () => ({ status: 200 });
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("keeps delivering promptly to a healthy endpoint while another one times out on every request", async () => {
    // Ordered: one request in flight at a time, so the count below is about time, not concurrency.
    const slow = await endpoint("slow", { enabledEvents: ["subscription.charge_failed"], ordered: true });
    const fast = await endpoint("fast", { enabledEvents: ["subscription.charge_failed"] });
    receiver.respond = (r) => (r.path === "/hooks/slow" ? { status: 200, delayMs: 3000 } : { status: 200 });
    const ids = await emitEvents(sys, merchant.id, 5, "subscription.charge_failed");
    const started = Date.now();
    await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.path === "/hooks/fast" && x.headers["webhook-id"] === id)), 10_000);
    // Within the time the slow one took to fail at most two requests, the fast one got all five.
    expect(Date.now() - started).to.be.below(2500);
    expect(receiver.received.filter((x) => x.path === "/hooks/slow").length).to.be.at.most(3);
    receiver.respond = () => ({ status: 200 });
    await merchant.api.delete(`/api/v1/webhook-endpoints/${slow.id}`);
    await merchant.api.delete(`/api/v1/webhook-endpoints/${fast.id}`);
  });

  it("sends up to maxInFlight requests at once to an unordered endpoint, never more, and one at a time to an ordered one", async () => {
    const wide = await endpoint("wide", { enabledEvents: ["subscription.unpaid"], maxInFlight: 4 });
    const single = await endpoint("single", { enabledEvents: ["subscription.unpaid"], ordered: true, maxInFlight: 4 });
    const inFlight: Record<string, number> = { "/hooks/wide": 0, "/hooks/single": 0 };
    const peak: Record<string, number> = { "/hooks/wide": 0, "/hooks/single": 0 };
    receiver.respond = (r) => {
      inFlight[r.path] = (inFlight[r.path] ?? 0) + 1;
      peak[r.path] = Math.max(peak[r.path] ?? 0, inFlight[r.path]!);
      setTimeout(() => (inFlight[r.path] = inFlight[r.path]! - 1), 150);
      return { status: 200, delayMs: 150 };
    };
    const ids = await emitEvents(sys, merchant.id, 12, "subscription.unpaid");
    await receiver.waitFor(
      (r) => ["/hooks/wide", "/hooks/single"].every((p) => ids.every((id) => r.some((x) => x.path === p && x.headers["webhook-id"] === id))),
      20_000,
    );
    expect(peak["/hooks/wide"]).to.be.above(1).and.at.most(4);
    expect(peak["/hooks/single"]).to.equal(1);
    const singleOrder = receiver.received.filter((x) => x.path === "/hooks/single").map((x) => ids.indexOf(String(x.headers["webhook-id"])));
    expect(singleOrder).to.deep.equal([...ids.keys()]);
    receiver.respond = () => ({ status: 200 });
    await merchant.api.delete(`/api/v1/webhook-endpoints/${wide.id}`);
    await merchant.api.delete(`/api/v1/webhook-endpoints/${single.id}`);
  });

  it("pauses an endpoint by hand and resumes it", async () => {
    const ep = await endpoint("paused", { enabledEvents: ["subscription.unpaid"] });
    const disabled = await merchant.api.post(`/api/v1/webhook-endpoints/${ep.id}/disable`);
    expect(disabled.status).to.equal(200);
    expect(disabled.body).to.include({ status: "DISABLED", disabledReason: "disabled by the merchant" });
    const [during] = await emitEvents(sys, merchant.id, 1, "subscription.unpaid");
    // Endpoints receive what is relayed while they are enabled: let the relay pass this event first.
    await eventually(async () => (await sys.sql("select 1 from event_feed where event_id = ?", [during])).length > 0);
    const enabled = await merchant.api.post(`/api/v1/webhook-endpoints/${ep.id}/enable`);
    expect(enabled.body.status).to.equal("ENABLED");
    const [afterwards] = await emitEvents(sys, merchant.id, 1, "subscription.unpaid");
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === afterwards));
    expect(await sys.sql("select id from webhook_deliveries where event_id = ? and endpoint_id = ?", [during, ep.id])).to.deep.equal([]);
    expect(receiver.received.some((x) => x.headers["webhook-id"] === during && x.path === "/hooks/paused")).to.equal(false);
    await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
  });

  it("sends only the subscribed types, and nothing after the endpoint is deleted", async () => {
    const ep = await endpoint("filter", { enabledEvents: ["subscription.expired"] });
    const [ignored] = await emitEvents(sys, merchant.id, 1, "subscription.activated");
    const [wanted] = await emitEvents(sys, merchant.id, 1, "subscription.expired");
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === wanted));
    expect((await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`)).body.data.map((d: { eventId: string }) => d.eventId)).to.deep.equal([
      wanted,
    ]);
    expect(receiver.received.some((x) => x.headers["webhook-id"] === ignored)).to.equal(false);
    const del = await merchant.api.delete(`/api/v1/webhook-endpoints/${ep.id}`);
    expect(del.status).to.equal(204);
    expect((await merchant.api.get(`/api/v1/webhook-endpoints/${ep.id}`)).status).to.equal(404);
    const [afterDelete] = await emitEvents(sys, merchant.id, 1, "subscription.expired");
    await waitUntilRelayed(sys, [afterDelete!]);
    await settle(sys);
    expect(await sys.sql("select id from webhook_deliveries where event_id = ? and endpoint_id = ?", [afterDelete, ep.id])).to.deep.equal([]);
    expect(receiver.received.some((x) => x.headers["webhook-id"] === afterDelete)).to.equal(false);
  });
});
