import { expect } from "chai";
import { Cluster } from "ioredis";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import { startRedisCluster, type RedisCluster } from "../support/redis-cluster.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { advanceBy, approvedSubscription, DAY, waitForCharges } from "../support/billing.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { clusterSafePrefix } from "../../services/platform/config.ts";

/**
 * The whole system on a three-master Redis Cluster it starts itself
 * (REDIS_CLUSTER_NODES): BullMQ needs every key of a queue in one slot,
 * which the `{…}` queue prefix gives. Renewals and webhooks go through it.
 */
describe("Redis Cluster", function () {
  this.timeout(90_000);
  let cluster: RedisCluster;
  let sys: TestSystem;
  let receiver: WebhookReceiver;
  let rpc: ReturnType<typeof subscriptionsRpc>;

  before(async () => {
    cluster = await startRedisCluster(3);
    receiver = await startWebhookReceiver();
    sys = await startTestSystem({ env: { REDIS_URL: `redis://${cluster.nodes[0]}`, REDIS_CLUSTER_NODES: cluster.nodes.join(",") } });
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
    await sys?.close();
    await receiver?.close();
    await cluster?.stop();
  });

  it("makes the queue prefix cluster-safe", () => {
    expect(clusterSafePrefix("billing")).to.equal("{billing}");
    expect(clusterSafePrefix("{billing}")).to.equal("{billing}");
    expect(clusterSafePrefix("prod-{billing}")).to.equal("prod-{billing}");
    expect(sys.config.queuePrefix).to.match(/^\{t[0-9a-f]+\}$/);
  });

  it("renews a subscription through the cluster (sweep → renewal job → charge)", async () => {
    const merchant = await sys.createMerchant("Cluster renewals");
    const { subscriptionId } = await approvedSubscription(sys, merchant.api, rpc.client, { plan: { amount: "3", interval: "DAY" } });
    await advanceBy(sys, DAY + 60);
    const charges = await waitForCharges(sys, subscriptionId, 2, 30_000);
    expect(charges.map((c) => c.status)).to.deep.equal(["SUCCEEDED", "SUCCEEDED"]);
  });

  it("delivers a webhook through the cluster (relay → delivery job → receiver)", async () => {
    const merchant = await sys.createMerchant("Cluster webhooks");
    const endpoint = await merchant.api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/cluster` });
    expect(endpoint.status).to.equal(201);
    const plan = await merchant.api.post("/api/v1/subscription-plans", { name: "Clustered", amount: "1", currency: "USD", interval: "MONTH" });
    expect(plan.status).to.equal(201);
    const [got] = await receiver.waitFor((r) => r.some((w) => w.path === "/hooks/cluster"), 30_000);
    expect(JSON.parse(got!.body).type).to.equal("plan.created");
  });

  it("keeps every queue key of the prefix on one slot", async () => {
    const [host, port] = cluster.nodes[0]!.split(":") as [string, string];
    const client = new Cluster([{ host, port: Number(port) }]);
    try {
      const slot = Number(await client.cluster("KEYSLOT", `${sys.config.queuePrefix}:renewals:meta`));
      const owner = (await client.cluster("SLOTS")).find(([from, to]) => slot >= from && slot <= to);
      const [ownerHost, ownerPort] = owner![2]!;
      const node = client.nodes("master").find((n) => n.options.port === ownerPort && n.options.host === ownerHost)!;
      const keys = await node.keys(`${sys.config.queuePrefix}:*`);
      expect(keys.length).to.be.greaterThan(0);
      expect(keys.some((k) => k.startsWith(`${sys.config.queuePrefix}:renewals:`))).to.equal(true);
      expect(keys.some((k) => k.startsWith(`${sys.config.queuePrefix}:webhooks:`))).to.equal(true);
    } finally {
      client.disconnect();
    }
  });
});
