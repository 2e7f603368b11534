import { expect } from "chai";
import { claimDueRenewals, RENEWAL_LOOKAHEAD, type DueRenewal } from "../../../services/subscriptions/renewals/find-due-renewals.ts";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import { createWalletUser, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceBy, approvedSubscription, DAY } from "../../support/billing.ts";

/** The renewal sweep's claims against the queue's backlog (issue 15): a backlog is enqueued once; orphaned claims are retaken. */
describe("renewal sweep: claims bounded by the queue backlog", () => {
  let sys: TestSystem;
  let rpc: ReturnType<typeof subscriptionsRpc>;

  before(async () => {
    sys = await startTestSystem({ workerGroups: [] });
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
    await sys?.close();
  });

  it("claims nothing while a batch waits, each due subscription once otherwise, and retakes live claims when the queue is empty", async () => {
    const { api } = await sys.createMerchant();
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await approvedSubscription(sys, api, rpc.client, { plan: { amount: "1", interval: "DAY" }, user })).subscriptionId);
    await advanceBy(sys, DAY + 60);
    const enqueued: DueRenewal[] = [];
    const claim = (backlog: number | undefined) => claimDueRenewals(sys.context(), async (due) => void enqueued.push(...due), backlog);

    // A full batch already waits in the queue: this sweep adds nothing.
    expect(await claim(RENEWAL_LOOKAHEAD)).to.equal(0);
    // Room in the queue: every due subscription is claimed and enqueued once.
    expect(await claim(10)).to.equal(3);
    expect(enqueued.map((d) => d.subscriptionId).sort()).to.deep.equal([...ids].sort());
    // Their jobs wait (backlog 3): claimed already, nothing again.
    expect(await claim(3)).to.equal(0);
    // The queue is empty but the claims are live: their jobs were lost (Redis data loss); they are taken again.
    expect(await claim(0)).to.equal(3);
    expect(enqueued).to.have.length(6);
  });
});
