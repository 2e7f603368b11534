import { expect } from "chai";
import { createHash, randomBytes } from "node:crypto";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import {
  createPlan,
  createWalletUser,
  eventsOf,
  localUrl,
  subscriptionBody,
  subscriptionsRpc,
  tokenOf,
  type WalletUserFixture,
} from "../support/subscriptions.ts";
import { ApprovalOutcome } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";

/**
 * Found by the soak: a create answered 504 while the service went on and made the subscription; the retry met
 * 409 SUBSCRIPTION_ALREADY_EXISTS and the authorization URL, shown only at create, was lost. The same request
 * again now answers the subscription it made, with a URL that works; anything else is still the conflict.
 */
describe("subscription create repeated (same merchant, same externalReference)", () => {
  let api: ApiClient;
  let plan: any;
  let customer: WalletUserFixture;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  const sys = useTestSystem({ workerGroups: [] });

  before(async () => {
    api = (await sys.createMerchant()).api;
    plan = await createPlan(api);
    customer = await createWalletUser(sys, { USDT_TRON: "1000" });
    rpc = subscriptionsRpc(sys);
  });
  after(() => rpc?.close());

  const body = (overrides: Record<string, unknown> = {}) => subscriptionBody(plan.id, customer.id, { metadata: { order: 7, tier: "gold" }, ...overrides });
  const create = (req: Record<string, unknown>) => api.post("/api/v1/subscriptions", req);

  it("the same request while the subscription awaits the customer: 201, the same subscription and URL, which the hosted page accepts; nothing new", async () => {
    const req = body({ serviceReference: "svc-9", authorizationExpiresInMinutes: 90 });
    const first = await create(req);
    expect(first.status, first.text).to.equal(201);
    // The same request in another key order and without the API's defaults written out is the same request.
    const again = await create({ ...req, metadata: { tier: "gold", order: 7 } });
    expect(again.status, again.text).to.equal(201);
    expect(again.body).to.deep.equal(first.body);

    const page = await fetch(localUrl(sys, again.body.authorizationUrl));
    expect(page.status).to.equal(200);
    expect((await fetch(`${sys.baseUrl}/authorize/${"A".repeat(43)}`)).status).to.equal(404);
    expect((await eventsOf(sys, first.body.subscriptionId)).map((e) => e.type)).to.deep.equal(["subscription.created"]);
    expect(await sys.sql("select 1 from audit_entries where action = 'subscription.create' and object_id = ?", [first.body.subscriptionId])).to.have.length(1);
    expect((await api.get(`/api/v1/subscriptions?externalReference=${req.externalReference}`)).body.data).to.have.length(1);

    // The URL works to the end: the customer approves through it.
    const approved = await rpc.client.approveAuthorization({
      token: tokenOf(again.body.authorizationUrl),
      walletUserId: customer.id,
      fundingAsset: "USDT_TRON",
    });
    expect(approved.outcome).to.equal(ApprovalOutcome.APPROVED);
  });

  it("409 SUBSCRIPTION_ALREADY_EXISTS for another request under the same reference", async () => {
    const req = body();
    expect((await create(req)).status).to.equal(201);
    for (const other of [
      { metadata: { order: 8 } },
      { successUrl: "https://merchant.example/elsewhere" },
      { authorizationExpiresInMinutes: 30 },
      { serviceReference: "x" },
    ]) {
      const res = await create({ ...req, ...other });
      expect(res.status, JSON.stringify(other)).to.equal(409);
      expect(res.body.error).to.equal("SUBSCRIPTION_ALREADY_EXISTS");
    }
  });

  it("409 once the subscription no longer awaits the customer: approved, or its link expired", async () => {
    const approvedReq = body();
    const first = await create(approvedReq);
    const approved = await rpc.client.approveAuthorization({
      token: tokenOf(first.body.authorizationUrl),
      walletUserId: customer.id,
      fundingAsset: "USDT_TRON",
    });
    expect(approved.outcome).to.equal(ApprovalOutcome.APPROVED);
    const afterApproval = await create(approvedReq);
    expect(afterApproval.status).to.equal(409);
    expect(afterApproval.body.error).to.equal("SUBSCRIPTION_ALREADY_EXISTS");

    // A link past its expiry reads EXPIRED before the sweep records it: its URL would lead nowhere.
    const expiringReq = body();
    const expiring = await create(expiringReq);
    await sys.sql(
      "update subscription_authorizations set created_at = created_at - interval '2 hours', expires_at = expires_at - interval '2 hours' where subscription_id = ?",
      [expiring.body.subscriptionId],
    );
    const afterExpiry = await create(expiringReq);
    expect(afterExpiry.status).to.equal(409);
    expect(afterExpiry.body.error).to.equal("SUBSCRIPTION_ALREADY_EXISTS");
  });

  it("409 for a link whose token cannot be computed again (a random token from before tokens were derived)", async () => {
    const req = body();
    const first = await create(req);
    const legacyHash = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("hex");
    await sys.sql("update subscription_authorizations set token_hash = ? where subscription_id = ?", [legacyHash, first.body.subscriptionId]);
    const res = await create(req);
    expect(res.status).to.equal(409);
    expect(res.body.error).to.equal("SUBSCRIPTION_ALREADY_EXISTS");
  });
});
