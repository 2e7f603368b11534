import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { type TestSystem, useTestSystem } from "../support/system.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { acceptInviteAndEnrol, invite, logIn, logOut, nextCode, submit, uniqueEmail, type MemberFixture } from "../support/dashboard.ts";
import { approvedSubscription } from "../support/billing.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";

/**
 * The audit log and exports (issue 24) in headless Chromium, JavaScript off:
 * Team-page actions carry the member (id and email), API actions the key,
 * failed logins and codes the member; the page filters and pages; the CSV
 * exports stream with their headers; 1280 and 390 px, axe-clean.
 */
describe("dashboard: audit log and exports (headless Chromium)", function () {
  this.timeout(180_000);
  let browser: Browser;
  let merchant: Awaited<ReturnType<TestSystem["createMerchant"]>>;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let context: BrowserContext;
  let page: Page;
  let owner: MemberFixture;
  let subscriptionId: string;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    merchant = await sys.createMerchant("Audited Streaming");
    rpc = subscriptionsRpc(sys);
    subscriptionId = (await approvedSubscription(sys, merchant.api, rpc.client, { plan: { amount: "10", currency: "USD" } })).subscriptionId;
    context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    owner = await acceptInviteAndEnrol(page, sys, await invite(sys, merchant.id, "OWNER"));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    rpc?.close();
  });

  const entries = (action: string) => sys.sql("select * from audit_entries where merchant_id = ? and action = ? order by at", [merchant.id, action]);

  it("Team-page actions are recorded with the member's id and email; an API action with the key", async () => {
    await page.goto(`${sys.baseUrl}/dashboard/team`);
    const email = uniqueEmail("support");
    await page.fill("input[name=email]", email);
    await page.selectOption("#invite-role", "SUPPORT");
    expect((await submit(page, "button[name=action][value=invite-member]")).status()).to.equal(201);
    const [invited] = await sys.sql("select id from members where email = ?", [email.toLowerCase()]);

    // Refused (no code): nothing recorded. Then done: exactly one entry.
    const row = page.locator(`form[data-member-id="${invited.id}"]`);
    await row.locator("select[name=role]").selectOption("VIEWER");
    expect((await submit(page, `form[data-member-id="${invited.id}"] button[name=action][value=change-role]`)).status()).to.equal(401);
    expect(await entries("member.change_role")).to.have.length(0);
    await row.locator("select[name=role]").selectOption("VIEWER");
    await row.locator("input[name=totp]").fill(await nextCode(owner));
    expect((await submit(page, `form[data-member-id="${invited.id}"] button[name=action][value=change-role]`)).status()).to.equal(303);

    const invitedEntry = (await entries("member.invite")).find((e: any) => e.object_id === invited.id);
    expect(invitedEntry).to.include({
      actor_type: "member",
      actor_id: owner.id,
      actor_label: owner.email.toLowerCase(),
      object_type: "member",
      object_id: invited.id,
    });
    expect(invitedEntry.ip).to.be.a("string");
    expect(invitedEntry.user_agent).to.be.a("string").and.not.empty;
    const changed = await entries("member.change_role");
    expect(changed).to.have.length(1);
    expect(changed[0]).to.include({ actor_type: "member", actor_id: owner.id, object_id: invited.id });
    // The owner's own invite acceptance and enrolment: the member themself.
    const accepted = (await entries("member.accept_invite")).find((e: any) => e.object_id === owner.id);
    expect(accepted).to.include({ actor_type: "member", actor_id: owner.id, object_id: owner.id });

    expect((await merchant.api.post(`/api/v1/subscriptions/${subscriptionId}/cancel`, {})).status).to.equal(200);
    const [cancelled] = await entries("subscription.cancel");
    expect(cancelled).to.include({ actor_type: "api_key", actor_id: merchant.apiKeyId, object_id: subscriptionId });
  });

  it("failed logins and wrong codes are recorded against the member; an unknown email against no merchant", async () => {
    const other = await browser.newContext({ javaScriptEnabled: false });
    try {
      const p = await other.newPage();
      await p.goto(`${sys.baseUrl}/dashboard/login`);
      await p.fill("input[name=email]", owner.email);
      await p.fill("input[name=password]", "not the password at all");
      expect((await submit(p, "button[name=action][value=login]")).status()).to.equal(401);
      const [failed] = await entries("member.login_failed");
      expect(failed).to.include({ actor_type: "member", actor_id: owner.id, actor_label: owner.email.toLowerCase(), object_id: owner.id });

      await p.fill("input[name=email]", owner.email);
      await p.fill("input[name=password]", owner.password);
      await submit(p, "button[name=action][value=login]");
      await p.fill("input[name=totp]", "000000");
      expect((await submit(p, "button[name=action][value=verify]")).status()).to.equal(401);
      expect(await entries("member.totp_failed")).to.have.length(1);

      await other.clearCookies();
      await p.goto(`${sys.baseUrl}/dashboard/login`);
      await p.fill("input[name=email]", uniqueEmail("nobody"));
      await p.fill("input[name=password]", "not the password at all");
      await submit(p, "button[name=action][value=login]");
      expect(await entries("member.login_failed")).to.have.length(1);
    } finally {
      await other.close();
    }
  });

  it("the Audit log page lists, filters (actor, action, object id, date) and pages", async () => {
    await page.goto(`${sys.baseUrl}/dashboard`);
    await Promise.all([page.waitForURL(/audit-log/), page.click('nav[aria-label="Dashboard"] >> text=Audit log')]);
    const rows = page.locator("[data-audit-entry-id]");
    expect(await rows.count()).to.be.at.least(5);
    const cancelRow = page.locator('[data-action="subscription.cancel"]');
    expect(await cancelRow.locator("[data-actor-type]").getAttribute("data-actor-type")).to.equal("api_key");
    expect(await cancelRow.textContent())
      .to.include(merchant.apiKey.slice(0, 12))
      .and.include(subscriptionId);

    await page.fill("input[name=actor]", owner.email);
    await page.fill("input[name=action]", "member.invite");
    await Promise.all([page.waitForURL(/action=member.invite/), page.click("text=Filter")]);
    expect(await rows.count()).to.equal(1);
    expect(await rows.first().textContent()).to.include(owner.email.toLowerCase());

    await page.goto(`${sys.baseUrl}/dashboard/audit-log?objectId=${subscriptionId}`);
    expect(await page.locator("[data-action]").evaluateAll((els) => els.map((e) => e.getAttribute("data-action")))).to.include("subscription.cancel");

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${sys.baseUrl}/dashboard/audit-log?from=${tomorrow}`);
    expect(await rows.count()).to.equal(0);
    expect(await page.locator("[data-empty]").count()).to.equal(1);
    const bad = await page.goto(`${sys.baseUrl}/dashboard/audit-log?from=yesterday`);
    expect(bad!.status()).to.equal(400);
    expect(await page.textContent("[role=alert]")).to.include("From date");

    // Keyset paging: 50 a page, "Older entries" continues where the page ended.
    for (let i = 0; i < 50; i++) await merchant.api.post("/api/v1/subscription-plans", { name: `P${i}`, amount: "1", currency: "USD", interval: "MONTH" });
    await page.goto(`${sys.baseUrl}/dashboard/audit-log`);
    const first = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-audit-entry-id")));
    expect(first).to.have.length(50);
    await Promise.all([page.waitForURL(/cursor=/), page.click("a[rel=next]")]);
    const second = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-audit-entry-id")));
    expect(second.length).to.be.at.least(1);
    expect(second.filter((id) => first.includes(id))).to.deep.equal([]);
  });

  it("exports charges and balance transactions as CSV (headers, one row per charge, exact amounts); a viewer is refused", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await page.request.get(`${sys.baseUrl}/dashboard/exports/charges.csv?from=${today}&to=${today}`);
    expect(res.status()).to.equal(200);
    expect(res.headers()["content-type"]).to.equal("text/csv; charset=utf-8");
    expect(res.headers()["content-disposition"]).to.equal(`attachment; filename="charges-${today}-to-${today}.csv"`);
    const lines = (await res.text()).trim().split("\n");
    expect(lines[0]).to.equal(
      "id,createdAt,settledAt,subscriptionId,walletUserId,purpose,status,failureReason,currency,amount,asset,assetAmount,rate,amountRefunded,assetAmountRefunded,receiptNumber",
    );
    expect(lines).to.have.length(2);
    const cells = lines[1]!.split(",");
    expect(cells[3]).to.equal(subscriptionId);
    expect(cells.slice(6, 11)).to.deep.equal(["SUCCEEDED", "", "USD", "10", "USDT_TRON"]);
    expect(cells[11]).to.match(/^\d+(\.\d+)?$/);
    expect(cells[12]).to.match(/^\d+(\.\d+)?$/);

    const balance = await page.request.get(`${sys.baseUrl}/dashboard/exports/balance-transactions.csv?from=${today}&to=${today}`);
    expect(balance.status()).to.equal(200);
    expect(balance.headers()["content-type"]).to.equal("text/csv; charset=utf-8");
    expect(balance.headers()["content-disposition"]).to.include("balance-transactions-");
    const movements = (await balance.text()).trim().split("\n");
    expect(movements[0]).to.equal("id,createdAt,type,asset,amount,balanceAfter,sourceType,sourceId,transactionId");
    expect(movements.slice(1).some((l) => l.includes(",SUBSCRIPTION_CHARGE,USDT_TRON,"))).to.equal(true);

    expect((await page.request.get(`${sys.baseUrl}/dashboard/exports/charges.csv?from=${today}`)).status()).to.equal(400);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const empty = await page.request.get(`${sys.baseUrl}/dashboard/exports/charges.csv?from=${tomorrow}&to=${tomorrow}`);
    expect((await empty.text()).trim().split("\n")).to.have.length(1);

    const viewerContext = await browser.newContext({ javaScriptEnabled: false });
    try {
      const viewerPage = await viewerContext.newPage();
      await acceptInviteAndEnrol(viewerPage, sys, await invite(sys, merchant.id, "VIEWER"));
      const refused = await viewerPage.request.get(`${sys.baseUrl}/dashboard/exports/charges.csv?from=${today}&to=${today}`);
      expect(refused.status()).to.equal(403);
      expect(await refused.text()).to.include('role="alert"');
      await viewerPage.goto(`${sys.baseUrl}/dashboard/exports`);
      expect(await viewerPage.locator("form[data-export]").count()).to.equal(0);
      // Viewers read the audit log (they read everything).
      expect((await viewerPage.goto(`${sys.baseUrl}/dashboard/audit-log`))!.status()).to.equal(200);
    } finally {
      await viewerContext.close();
    }
  });

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    it(`the Audit log and Exports pages fit ${name} and are axe-clean`, async () => {
      const ctx = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      try {
        const p = await ctx.newPage();
        const member = await acceptInviteAndEnrol(p, sys, await invite(sys, merchant.id, "ADMIN"));
        for (const path of ["/dashboard/audit-log", "/dashboard/audit-log?from=yesterday", "/dashboard/exports"]) {
          await p.goto(`${sys.baseUrl}${path}`);
          expect(await seriousA11yViolations(p), path).to.deep.equal([]);
          expect(await overflowingElements(p), path).to.deep.equal([]);
          await p.screenshot({ path: `/tmp/audit-shot-${path.replace(/\W+/g, "-")}-${viewport.width}.png`, fullPage: true });
        }
        await logOut(p);
        expect((await logIn(p, sys, member, await nextCode(member))).status()).to.be.oneOf([200, 303]);
      } finally {
        await ctx.close();
      }
    });
  }
});
