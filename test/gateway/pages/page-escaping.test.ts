import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { hostedPage } from "../../support/hosted-page.ts";
import { logIn, pageSession } from "../../support/page-session.ts";
import { createPlan, createSubscription, createWalletUser, PIN, subscriptionsRpc, type WalletUserFixture } from "../../support/subscriptions.ts";
import { approvedSubscription, createChange } from "../../support/change-sessions.ts";
import { escaped, expectOnlyEscaped, HOSTILE } from "../../support/hostile-text.ts";

/**
 * Every value a merchant, a customer or a URL puts on a hosted page, made
 * hostile (a `<script>`, an `<img onerror>`, both kinds of quote to leave an
 * attribute) and sent through the real flow: merchant name, plan name and
 * description, a plan change's reason, the email typed into the login form,
 * form fields and query parameters. Each comes out escaped, in text and in
 * attributes (views.test.ts does the same for every field of every view).
 */
describe("hosted pages escape what merchants, customers and URLs put on them", function () {
  this.timeout(60_000);
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let user: WalletUserFixture;
  let plan: { id: string };

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
    api = (await sys.createMerchant(HOSTILE)).api;
    plan = await createPlan(api, { name: HOSTILE, description: HOSTILE, amount: "10", maximumChargeAmount: "12" });
    user = await createWalletUser(sys, { USDT_TRON: "100" });
  });
  after(async () => {
    rpc?.close();
  });

  it("the authorization page: merchant, plan name and description, and the email typed at login", async () => {
    const s = await createSubscription(api, plan.id, user.id);
    const page = hostedPage(sys, new URL(s.authorizationUrl).pathname);
    const login = await page.get();
    expect(login.status).to.equal(200);
    // Merchant (heading, note, cancel button), plan (title, line), description, <title>.
    expect(expectOnlyEscaped(login.html, "login")).to.be.at.least(5);

    const refused = await page.post({ action: "login", email: HOSTILE, password: "not the password" });
    expect(refused.status).to.be.oneOf([401, 422]);
    expect(refused.html).to.include(`value="${escaped(HOSTILE)}"`);
    expectOnlyEscaped(refused.html, "login refused");

    await page.logIn(user);
    const funding = await page.get();
    expect(funding.html).to.include('name="pin"');
    expectOnlyEscaped(funding.html, "funding");

    // Form fields the page reads back: an unknown action, an asset code that is not one.
    const unknown = await page.post({ action: HOSTILE });
    expect(unknown.status).to.equal(400);
    expectOnlyEscaped(unknown.html, "unknown action");
    const asset = await page.post({ action: "approve", fundingAsset: HOSTILE, pin: PIN });
    expect(asset.status).to.equal(422);
    expectOnlyEscaped(asset.html, "posted asset");
  });

  it("the plan change page: the merchant's reason and the requested plan's name", async () => {
    const subscriptionId = await approvedSubscription(api, rpc.client, plan.id, user.id);
    const bigger = await createPlan(api, { name: HOSTILE, amount: "11", maximumChargeAmount: "12" });
    const change = await createChange(api, subscriptionId, bigger.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "1", reason: HOSTILE });
    const page = hostedPage(sys, new URL(change.approvalUrl).pathname);
    expect(expectOnlyEscaped((await page.get()).html, "change login")).to.be.at.least(5);
    await page.logIn(user);
    const approval = await page.get();
    expect(approval.html).to.include('name="pin"');
    expectOnlyEscaped(approval.html, "change approval");
  });

  it("the self-service page: names in cards and their attributes, query parameters and posted fields", async () => {
    const subscriptionId = await approvedSubscription(api, rpc.client, plan.id, user.id);
    const page = await pageSession(sys.baseUrl, "/wallet/subscriptions");
    await logIn(page, user.email, user.password);
    const query = new URLSearchParams({ done: "cancelled", subscriptionId: HOSTILE, cursor: HOSTILE });
    const list = await page.get(`/wallet/subscriptions?${query}`);
    expect(list.status).to.equal(200);
    expect(list.html).to.include(`data-subscription-id="${subscriptionId}"`);
    // Each card: merchant, plan name, and both again in its aria-label.
    expect(expectOnlyEscaped(list.html, "list")).to.be.at.least(3);

    const unknown = await page.post({ action: HOSTILE });
    expect(unknown.status).to.equal(400);
    expectOnlyEscaped(unknown.html, "unknown action");
    const asset = await page.post({ action: "change-funding-asset", subscriptionId, fundingAsset: HOSTILE, pin: PIN });
    expect(asset.status).to.equal(422);
    expectOnlyEscaped(asset.html, "posted asset");
  });
});
