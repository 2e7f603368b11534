import { expect } from "chai";
import type { Queue } from "bullmq";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { startWebhookWorkers } from "../../support/webhook-workers.ts";
import { emitEvents } from "../../support/events.ts";
import { eventually } from "../../support/eventually.ts";
import type { RunningWorkers } from "../../../workers/start-workers.ts";
import { declareSweep } from "../../../workers/declare-sweep.ts";
import { deliverWebhooksKind, dueDeliveriesSweep, relayEventsSweep } from "../../../services/events/webhook-queue.ts";

const EVERY_STATE = ["completed", "failed", "waiting", "delayed", "active", "prioritized", "waiting-children"] as const;

/** Names of every job a queue holds, whatever its state (finished ones kept by removeOnComplete/Fail), created since `since`. */
async function jobNames(queue: Queue, since = 0): Promise<Set<string>> {
  return new Set((await queue.getJobs([...EVERY_STATE], 0, -1)).filter((j) => j && j.timestamp >= since).map((j) => j.name));
}

/**
 * The relay sweep runs every 0.5 s: on the webhooks queue its runs buried the deliveries an
 * operator looks for in /admin/queues. Sweeps run on `webhooks-sweeps`; the webhooks queue holds
 * deliveries only.
 */
describe("sweeps run on their own queue, apart from the group's jobs", function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let receiver: WebhookReceiver;
  let workers: RunningWorkers | undefined;

  before(async () => {
    sys = await startTestSystem({ workerGroups: [] });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await workers?.close();
    await receiver?.close();
    await sys?.close();
  });

  it("the webhooks queue holds deliveries only; the relay's runs and the schedulers are on webhooks-sweeps; an earlier version's schedulers are removed", async () => {
    const work = sys.system.queues!.queue("webhooks");
    const sweeps = sys.system.queues!.sweepQueue("webhooks");
    expect(sweeps.name).to.equal("webhooks-sweeps");
    // What an earlier version declared: the sweeps' schedulers on the group's own queue.
    await declareSweep(work, relayEventsSweep, sys.config);
    expect((await work.getJobSchedulers()).map((s) => s.key)).to.deep.equal([relayEventsSweep.name]);

    workers = await startWebhookWorkers(sys);
    const started = Date.now();
    const { id: merchantId, api } = await sys.createMerchant("Sweeps apart");
    expect((await api.post("/api/v1/webhook-endpoints", { url: receiver.url, ordered: true })).status).to.equal(201);
    const ids = await emitEvents(sys, merchantId, 5);
    const received = await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.headers["webhook-id"] === id)), 15_000);
    // Exactly once and, for an ordered endpoint, in order.
    expect(received.map((r) => r.headers["webhook-id"]).filter((id) => ids.includes(id as string))).to.deep.equal(ids);

    // Several scheduled relay runs later (kept as completed jobs on the sweeps queue)...
    await eventually(async () => ((await sweeps.getJobCounts("completed")).completed! >= 6 ? true : undefined), 20_000, "the sweeps to run a few times");
    expect(await jobNames(sweeps)).to.include(relayEventsSweep.name);
    expect([...(await jobNames(sweeps))].every((name) => [relayEventsSweep.name, dueDeliveriesSweep.name].includes(name))).to.equal(true);
    expect((await sweeps.getJobSchedulers()).map((s) => s.key).sort()).to.deep.equal([relayEventsSweep.name, dueDeliveriesSweep.name].sort());

    // ...the webhooks queue has no scheduler and no sweep run since the workers started: only deliveries went
    // there. The runs the old scheduler queued before were run, not failed.
    expect(await work.getJobSchedulers()).to.deep.equal([]);
    expect([...(await jobNames(work, started))].filter((name) => name !== deliverWebhooksKind.name)).to.deep.equal([]);
    expect((await work.getJobCounts("failed")).failed).to.equal(0);
  });
});
