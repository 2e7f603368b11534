import { expect } from "chai";
import { handlersOf, useTestSystem } from "../../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { emitEvents } from "../../support/events.ts";
import { deliverWebhooksKind } from "../../../services/events/webhook-queue.ts";
import { recordEvents } from "../../../services/events/record-event.ts";

describe("relay poke (a committed event reaches the relay without its period)", () => {
  let receiver: WebhookReceiver;

  // No relay sweep at all: only the poke published after commit can relay the event.
  const sys = useTestSystem({ workerGroups: ["webhooks"], jobs: handlersOf(deliverWebhooksKind) });
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  it("relays and delivers an event as soon as its transaction commits", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Poke");
    expect((await api.post("/api/v1/webhook-endpoints", { url: receiver.url })).status).to.equal(201);
    const ids = await emitEvents(sys, merchantId, 3);
    await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.headers["webhook-id"] === id)));
    const relayed = await sys.sql<{ n: number }>("select count(*)::int as n from event_feed where event_id = any(?::uuid[])", [`{${ids.join(",")}}`]);
    expect(relayed[0]!.n).to.equal(3);
  });

  it("relays events a set-based statement wrote inside a transaction (recordEvents) as soon as it commits", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Poke set");
    expect((await api.post("/api/v1/webhook-endpoints", { url: receiver.url })).status).to.equal(201);
    const ctx = sys.context();
    const refs = [0, 1, 2].map((i) => `set-${i}-${Date.now()}`);
    await ctx.em.fork().transactional((em) =>
      recordEvents(
        em,
        ctx.clock,
        refs.map((ref) => ({ merchantId, type: "plan.created" as const, data: { ref } })),
      ),
    );
    const rows = await sys.sql<{ id: string }>("select id from events where data->>'ref' = any(?::text[])", [`{${refs.join(",")}}`]);
    expect(rows).to.have.length(3);
    await receiver.waitFor((r) => rows.every(({ id }) => r.some((x) => x.headers["webhook-id"] === id)));
  });
});
