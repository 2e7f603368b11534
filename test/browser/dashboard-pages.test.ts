import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ApprovalOutcome } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { acceptInviteAndEnrol, invite, submit } from "../support/dashboard.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc, tokenOf, type WalletUserFixture } from "../support/subscriptions.ts";

type Merchant = { id: string; api: ApiClient };

/**
 * The dashboard's Overview, Subscriptions and Plans pages (issue 24) in
 * headless Chromium with JavaScript off, on the real stack: figures checked
 * against seeded data (MRR worked out by hand below), search and keyset
 * pages, the role matrix (a viewer sees no action and is refused a posted
 * one; support refunds and cancels; an admin creates, edits and archives a
 * plan), service refusals as 4xx pages with [role=alert], another merchant's
 * ids as the 404 page, CSRF, and every page at 1280 and 390 px with axe.
 */
describe("dashboard: overview, subscriptions and plans (headless Chromium)", function () {
  this.timeout(240_000);
  let browser: Browser;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let acme: Merchant;
  let globex: Merchant;
  const contexts: BrowserContext[] = [];
  let admin: Page;
  let support: Page;
  let viewer: Page;
  /** Acme's seeded subscriptions by name. */
  const subs: Record<string, { id: string; reference: string; user: WalletUserFixture; outcome: ApprovalOutcome }> = {};
  let globexSubscriptionId: string;
  let globexPlanId: string;

  /** A subscription the customer approved with USDT_TRON (the first payment taken unless the plan has a trial). */
  async function approved(m: Merchant, planId: string, credits = "1000") {
    const user = await createWalletUser(sys, { USDT_TRON: credits });
    const s = await createSubscription(m.api, planId, user.id, { customerEmail: user.email });
    const res = await rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    return {
      id: s.subscriptionId,
      outcome: res.outcome,
      user,
      reference: (await m.api.get(`/api/v1/subscriptions/${s.subscriptionId}`)).body.externalReference as string,
    };
  }

  const emails = new Map<Page, string>();
  async function member(m: Merchant, role: string): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const page = await context.newPage();
    emails.set(page, (await acceptInviteAndEnrol(page, sys, await invite(sys, m.id, role))).email);
    return page;
  }

  const csrfOf = async (page: Page) => (await page.getAttribute("input[name=csrf]", "value"))!;
  const metric = async (page: Page, name: string) => (await page.textContent(`[data-metric="${name}"]`))?.trim();

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    rpc = subscriptionsRpc(sys);
    acme = await sys.createMerchant("Acme Streaming");
    globex = await sys.createMerchant("Globex News");

    // Acme's catalogue: MRR per month, by hand, further down.
    const monthly = await createPlan(acme.api, { name: "Monthly", amount: "10.50", currency: "USD", interval: "MONTH" });
    const yearly = await createPlan(acme.api, { name: "Yearly", amount: "120", currency: "USD", interval: "YEAR" });
    const fortnightly = await createPlan(acme.api, { name: "Fortnightly", amount: "7", currency: "USD", interval: "WEEK", intervalCount: 2 });
    const quarterly = await createPlan(acme.api, { name: "Quarterly", amount: "20", currency: "EUR", interval: "MONTH", intervalCount: 3 });
    const trial = await createPlan(acme.api, { name: "Trial", amount: "99", currency: "USD", interval: "MONTH", trialDays: 14 });

    subs.monthly1 = await approved(acme, monthly.id);
    subs.monthly2 = await approved(acme, monthly.id);
    subs.yearly = await approved(acme, yearly.id);
    subs.fortnightly = await approved(acme, fortnightly.id);
    subs.quarterly = await approved(acme, quarterly.id);
    subs.trial = await approved(acme, trial.id);
    subs.cancelled = await approved(acme, monthly.id);
    expect((await acme.api.post(`/api/v1/subscriptions/${subs.cancelled.id}/cancel`)).status).to.equal(200);
    // Too poor to pay: the approval is refused (a FAILED charge attempt), the subscription stays pending.
    subs.poor = await approved(acme, yearly.id, "1");
    expect(subs.poor.outcome).to.equal(ApprovalOutcome.INSUFFICIENT_FUNDS);
    for (const name of ["monthly1", "monthly2", "yearly", "fortnightly", "quarterly", "trial", "cancelled"]) {
      expect(subs[name]!.id, name).to.be.a("string");
    }
    // 22 more pending ones: more than a page (20) of subscriptions.
    const pendingUser = await createWalletUser(sys);
    for (let i = 0; i < 22; i++) await createSubscription(acme.api, monthly.id, pendingUser.id, { externalReference: `pending-${i}` });

    const globexPlan = await createPlan(globex.api, { name: "Globex monthly", amount: "5", currency: "USD" });
    globexPlanId = globexPlan.id;
    globexSubscriptionId = (await approved(globex, globexPlan.id)).id;

    [admin, support, viewer] = await Promise.all([member(acme, "ADMIN"), member(acme, "SUPPORT"), member(acme, "VIEWER")]);
  });
  after(async () => {
    for (const c of contexts) await c.close();
    rpc?.close();
    await browser?.close();
  });

  it("Overview: active subscriptions, MRR per currency (worked out by hand), 30-day charges, the chart and the balance", async () => {
    await admin.goto(`${sys.baseUrl}/dashboard`);
    // ACTIVE only: monthly ×2, yearly, fortnightly, quarterly (not the trial, the cancelled, the pending or the refused ones).
    expect(await metric(admin, "active-subscriptions")).to.equal("5");
    // USD: 2 × 10.50 + 120 / 12 + 7 × 52 / 12 / 2 = 21 + 10 + 15.1666… = 46.1666… → 46.17.
    expect(await metric(admin, "mrr-USD")).to.equal("46.17");
    expect(await admin.getAttribute('[data-metric="mrr-USD"]', "data-value")).to.equal("46.17");
    // EUR: 20 every 3 months = 6.666… → 6.67.
    expect(await metric(admin, "mrr-EUR")).to.equal("6.67");
    // The first payments of the six approved (not the trial); the refused approval's attempt failed.
    expect(await metric(admin, "charges-succeeded-30d")).to.equal("6");
    const [failed] = await sys.sql(`select count(*)::int as n from subscription_charges where merchant_id = ? and status = 'FAILED'`, [acme.id]);
    expect(failed.n).to.be.greaterThan(0);
    expect(await metric(admin, "charges-failed-30d")).to.equal(String(failed.n));
    expect(await admin.textContent("main"))
      .to.include("Monthly recurring revenue (MRR)")
      .and.include("divided by 12");
    // The chart: an SVG with a title and a description, and the same figures as a table.
    const chart = admin.locator("svg[data-chart]").first();
    expect(await chart.getAttribute("role")).to.equal("img");
    expect(await admin.locator("svg[data-chart] title").first().textContent()).to.include("Charged volume");
    expect(await admin.locator("svg[data-chart] rect").count()).to.be.greaterThan(29);
    expect(await admin.locator("figure.chart table tbody tr").count()).to.be.greaterThan(29);
    // The balance: what the charges brought in, per asset.
    expect(await admin.textContent('tr[data-asset="USDT_TRON"] [data-balance=available]')).to.match(/USDT_TRON/);
    // Another merchant's overview is its own: Globex's admin sees one subscription.
    const globexAdmin = await member(globex, "VIEWER");
    await globexAdmin.goto(`${sys.baseUrl}/dashboard`);
    expect(await metric(globexAdmin, "active-subscriptions")).to.equal("1");
    expect(await metric(globexAdmin, "mrr-USD")).to.equal("5.00");
    expect(await globexAdmin.locator('[data-metric="mrr-EUR"]').count()).to.equal(0);
  });

  it("Subscriptions: search by id, externalReference and customer email; status filter; next and previous pages", async () => {
    const rowsOf = async () =>
      admin.locator("table[data-list=subscriptions] tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-subscription-id")));
    await admin.goto(`${sys.baseUrl}/dashboard/subscriptions`);
    const firstPage = await rowsOf();
    expect(firstPage).to.have.length(20);
    await Promise.all([admin.waitForURL(/cursor=/), admin.click("a[rel=next]")]);
    const secondPage = await rowsOf();
    expect(secondPage.length).to.be.greaterThan(0);
    expect(secondPage).not.to.include.members([firstPage[0]]);
    await Promise.all([admin.waitForURL((u) => !u.searchParams.has("cursor")), admin.click("a[rel=prev]")]);
    expect(await rowsOf()).to.deep.equal(firstPage);

    for (const q of [subs.yearly!.id, subs.yearly!.reference, subs.yearly!.user.email.toUpperCase()]) {
      await admin.goto(`${sys.baseUrl}/dashboard/subscriptions`);
      await admin.fill("input[name=q]", q);
      await Promise.all([admin.waitForURL(/q=/), admin.click("form[role=search] button[type=submit]")]);
      expect(await rowsOf(), q).to.deep.equal([subs.yearly!.id]);
    }
    await admin.goto(`${sys.baseUrl}/dashboard/subscriptions`);
    await admin.selectOption("select[name=status]", "CANCELLED");
    await Promise.all([admin.waitForURL(/status=CANCELLED/), admin.click("form[role=search] button[type=submit]")]);
    expect(await rowsOf()).to.deep.equal([subs.cancelled!.id]);
    expect(await admin.textContent(`tr[data-subscription-id="${subs.cancelled!.id}"] td[data-label=Status]`)).to.equal("Cancelled");
    // Another merchant's subscription is not found by its id.
    await admin.goto(`${sys.baseUrl}/dashboard/subscriptions?q=${globexSubscriptionId}`);
    expect(await rowsOf()).to.deep.equal([]);
  });

  it("the search and the overview read the indexes of migration 0033", async () => {
    // With sequential scans priced out, what each query can use: an index, merchant first (a tiny test table would otherwise be scanned).
    const planOf = (sql: string, params: unknown[]) =>
      sys.context().em.transactional(async (em) => {
        await em.execute("set local enable_seqscan = off");
        return (await em.execute<{ "QUERY PLAN": string }[]>(`explain ${sql}`, params)).map((r) => r["QUERY PLAN"]).join("\n");
      });
    const search = "select * from subscriptions where merchant_id = ? and ";
    expect(await planOf(`${search}lower(customer_email) = ? order by created_at desc, id desc limit 21`, [acme.id, "x@example.com"])).to.include(
      "subscriptions_merchant_email_idx",
    );
    expect(await planOf(`${search}external_reference = ? order by created_at desc, id desc limit 21`, [acme.id, "x"])).to.include(
      "subscriptions_merchant_external_idx",
    );
    expect(
      await planOf("select status, count(*) from subscription_charges where merchant_id = ? and created_at >= now() - interval '30 days' group by status", [
        acme.id,
      ]),
    ).to.include("subscription_charges_merchant_created_idx");
    // A subscription's events: each side of the OR is an index range on its expression.
    await sys.sql("analyze events");
    for (const key of ["id", "subscriptionId"]) {
      const plan = await planOf(`select * from events where merchant_id = ? and (data->>'${key}') = ? order by created_at desc, id desc limit 101`, [
        acme.id,
        acme.id,
      ]);
      expect(plan, key).to.match(new RegExp(`Index Cond: .*data ->> '${key}'`));
    }
  });

  it("a subscription: authorization, charges, events; SUPPORT refunds in part and in full, then cancels; refusals are 4xx with [role=alert]", async () => {
    const id = subs.monthly1!.id;
    const url = `${sys.baseUrl}/dashboard/subscriptions/${id}`;
    await support.goto(url);
    expect(await support.textContent("[data-authorization]")).to.include("Approved");
    expect(await support.locator("tr[data-event-id]").count()).to.be.greaterThan(0);
    expect(await support.textContent("table[data-list=events]")).to.include("subscription.activated");
    const chargeId = (await support.getAttribute("form[data-charge-id]", "data-charge-id"))!;
    const form = `form[data-charge-id="${chargeId}"]`;

    // Too much: the service's refusal on a 409 page, nothing refunded.
    await support.fill(`${form} input[name=amount]`, "11");
    expect((await submit(support, `${form} button[name=action][value=refund]`)).status()).to.equal(409);
    expect(await support.textContent("[role=alert]")).to.include("more than remains");
    // Not an amount: 400 naming the field.
    await support.fill(`${form} input[name=amount]`, "ten");
    expect((await submit(support, `${form} button[name=action][value=refund]`)).status()).to.equal(400);
    expect(await support.textContent("[role=alert]")).to.include("amount");

    await support.fill(`${form} input[name=amount]`, "2.50");
    expect((await submit(support, `${form} button[name=action][value=refund]`)).status()).to.equal(303);
    expect(await support.textContent("[role=status]")).to.include("refund is made");
    expect(await support.textContent(`tr[data-charge-row="${chargeId}"] [data-refunds]`)).to.include("2.50 USD");
    // Empty amount: everything that remains (8.00).
    await support.fill(`${form} input[name=amount]`, "");
    expect((await submit(support, `${form} button[name=action][value=refund]`)).status()).to.equal(303);
    expect(await support.textContent(`tr[data-charge-row="${chargeId}"] [data-refunds]`)).to.include("8.00 USD");
    const refunds = await sys.sql(`select id, amount::text as amount from subscription_refunds where charge_id = ? order by created_at`, [chargeId]);
    expect(refunds.map((r) => Number(r.amount))).to.deep.equal([2.5, 8]);

    expect((await submit(support, "button[name=action][value=cancel]")).status()).to.equal(303);
    expect(await support.textContent("[role=status]")).to.include("cancelled");
    expect((await acme.api.get(`/api/v1/subscriptions/${id}`)).body.status).to.equal("CANCELLED");
    // Both refunds and the cancel are in the audit log, with the member's id and email as the actor.
    const supportEmail = emails.get(support)!;
    const entriesOf = async (objectId: string) => (await acme.api.get(`/api/v1/audit-log?objectId=${objectId}`)).body.data as any[];
    const cancelEntries = (await entriesOf(id)).filter((e) => e.action === "subscription.cancel");
    expect(cancelEntries).to.have.length(1);
    expect(cancelEntries[0].actor).to.include({ type: "member", label: supportEmail });
    for (const refund of refunds) {
      const [entry] = (await entriesOf(refund.id)).filter((e) => e.action === "refund.create");
      expect(entry?.actor, `audit entry of refund ${refund.id}`).to.include({ type: "member", label: supportEmail });
    }
    // A move the status machine forbids: 409 with the reason, never a 500.
    expect((await submit(support, "button[name=action][value=resume]")).status()).to.equal(409);
    expect(await support.textContent("[role=alert]")).to.include("cannot do that");

    // SUPPORT may not manage plans: no form, and a posted one is refused.
    await support.goto(`${sys.baseUrl}/dashboard/plans`);
    expect(await support.locator("button[name=action][value=create-plan]").count()).to.equal(0);
    const refused = await support.request.post(`${sys.baseUrl}/dashboard/plans`, {
      form: {
        csrf: await csrfOf(support),
        action: "create-plan",
        name: "x",
        amount: "1",
        currency: "USD",
        interval: "MONTH",
        intervalCount: "1",
        trialDays: "0",
      },
    });
    expect(refused.status()).to.equal(403);
    expect(await refused.text()).to.include('role="alert"');
  });

  it("a VIEWER sees no action; a posted action answers 403 with [role=alert] and changes nothing", async () => {
    const id = subs.monthly2!.id;
    await viewer.goto(`${sys.baseUrl}/dashboard/subscriptions/${id}`);
    for (const value of ["pause", "resume", "cancel", "refund"]) expect(await viewer.locator(`button[name=action][value=${value}]`).count(), value).to.equal(0);
    expect(await viewer.locator("form[data-charge-id]").count()).to.equal(0);
    const csrf = await csrfOf(viewer);
    for (const action of ["pause", "cancel"]) {
      const res = await viewer.request.post(`${sys.baseUrl}/dashboard/subscriptions/${id}`, { form: { csrf, action } });
      expect(res.status(), action).to.equal(403);
      expect(await res.text()).to.include('role="alert"');
    }
    const [charge] = await sys.sql(`select id from subscription_charges where subscription_id = ?`, [id]);
    const refund = await viewer.request.post(`${sys.baseUrl}/dashboard/subscriptions/${id}`, {
      form: { csrf, action: "refund", chargeId: charge.id, amount: "" },
    });
    expect(refund.status()).to.equal(403);
    expect((await acme.api.get(`/api/v1/subscriptions/${id}`)).body.status).to.equal("ACTIVE");
    expect(await sys.sql(`select id from subscription_refunds where charge_id = ?`, [charge.id])).to.have.length(0);
    await viewer.goto(`${sys.baseUrl}/dashboard/plans`);
    expect(await viewer.locator("button[name=action][value=create-plan]").count()).to.equal(0);
    expect(await viewer.locator("button[name=action][value=archive-plan]").count()).to.equal(0);
  });

  it("Plans: an ADMIN creates (a refusal names the field and keeps what was typed), edits, archives and unarchives a plan", async () => {
    await admin.goto(`${sys.baseUrl}/dashboard/plans`);
    await admin.fill("input[name=name]", "Gold <b>tier</b>");
    await admin.fill("textarea[name=description]", "Everything, every week");
    await admin.fill("input[name=amount]", "12.345.6");
    await admin.selectOption("select[name=currency]", "EUR");
    await admin.selectOption("select[name=interval]", "WEEK");
    await admin.fill("input[name=intervalCount]", "2");
    await admin.fill("input[name=trialDays]", "3");
    expect((await submit(admin, "button[name=action][value=create-plan]")).status()).to.equal(400);
    expect(await admin.textContent("[data-field-error=amount]")).to.include("amount");
    expect(await admin.textContent("[role=alert]")).to.include("amount");
    expect(await admin.inputValue("input[name=name]")).to.equal("Gold <b>tier</b>");
    expect(await admin.inputValue("select[name=currency]")).to.equal("EUR");
    expect(await admin.inputValue("input[name=intervalCount]")).to.equal("2");
    // The cap below the price: the service names maximumChargeAmount.
    await admin.fill("input[name=amount]", "12.50");
    await admin.fill("input[name=maximumChargeAmount]", "10");
    expect((await submit(admin, "button[name=action][value=create-plan]")).status()).to.equal(400);
    expect(await admin.textContent("[data-field-error=maximumChargeAmount]")).to.include("greater than or equal to amount");
    await admin.fill("input[name=maximumChargeAmount]", "15");
    expect((await submit(admin, "button[name=action][value=create-plan]")).status()).to.equal(303);
    expect(await admin.textContent("[role=status]")).to.include("plan is created");
    const [row] = await sys.sql(
      `select id, amount::text as amount, currency, interval, interval_count, trial_days, maximum_charge_amount::text as cap from plans where merchant_id = ? and name = ?`,
      [acme.id, "Gold <b>tier</b>"],
    );
    expect(row).to.include({ currency: "EUR", interval: "WEEK", interval_count: 2, trial_days: 3 });
    expect(Number(row.amount)).to.equal(12.5);
    expect(Number(row.cap)).to.equal(15);

    await Promise.all([admin.waitForURL(new RegExp(`/dashboard/plans/${row.id}$`)), admin.click(`tr[data-plan-id="${row.id}"] td[data-label=Name] a`)]);
    // Spaces only pass the browser's `required` and are refused by the service (it trims).
    await admin.fill("input[name=name]", "   ");
    expect((await submit(admin, "button[name=action][value=update-plan]")).status()).to.equal(400);
    expect(await admin.textContent("[data-field-error=name]")).to.include("name");
    await admin.fill("input[name=name]", "Gold");
    await admin.fill("textarea[name=description]", "");
    expect((await submit(admin, "button[name=action][value=update-plan]")).status()).to.equal(303);
    expect(await admin.textContent("[role=status]")).to.include("saved");
    expect((await acme.api.get(`/api/v1/subscription-plans/${row.id}`)).body).to.include({ name: "Gold", description: null });

    expect((await submit(admin, "button[name=action][value=archive-plan]")).status()).to.equal(303);
    expect(await admin.textContent("[data-status]")).to.equal("Archived");
    await admin.goto(`${sys.baseUrl}/dashboard/plans?status=ARCHIVED`);
    expect(await admin.locator("tr[data-plan-id]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-plan-id")))).to.deep.equal([row.id]);
    expect((await submit(admin, `form[data-plan-id="${row.id}"] button[name=action][value=unarchive-plan]`)).status()).to.equal(303);
    expect((await acme.api.get(`/api/v1/subscription-plans/${row.id}`)).body.status).to.equal("ACTIVE");
    await admin.goto(`${sys.baseUrl}/dashboard/plans?status=ACTIVE`);
    expect(await admin.locator(`tr[data-plan-id="${row.id}"] td[data-label=Status]`).textContent()).to.equal("Active");
  });

  it("another merchant's subscription, charge and plan ids answer the 404 page and change nothing; a form without CSRF token is 403", async () => {
    await admin.goto(`${sys.baseUrl}/dashboard/plans`);
    const csrf = await csrfOf(admin);
    const get = await admin.goto(`${sys.baseUrl}/dashboard/subscriptions/${globexSubscriptionId}`);
    expect(get!.status()).to.equal(404);
    expect((await admin.goto(`${sys.baseUrl}/dashboard/subscriptions/not-a-uuid`))!.status()).to.equal(404);
    expect((await admin.goto(`${sys.baseUrl}/dashboard/plans/${globexPlanId}`))!.status()).to.equal(404);
    for (const form of [{ action: "cancel" }, { action: "pause" }]) {
      const res = await admin.request.post(`${sys.baseUrl}/dashboard/subscriptions/${globexSubscriptionId}`, { form: { csrf, ...form } });
      expect(res.status(), form.action).to.equal(404);
    }
    const [globexCharge] = await sys.sql(`select id from subscription_charges where subscription_id = ?`, [globexSubscriptionId]);
    // A foreign charge on one's own subscription's page: 404 as well.
    const refund = await admin.request.post(`${sys.baseUrl}/dashboard/subscriptions/${subs.yearly!.id}`, {
      form: { csrf, action: "refund", chargeId: globexCharge.id },
    });
    expect(refund.status()).to.equal(404);
    const archive = await admin.request.post(`${sys.baseUrl}/dashboard/plans`, { form: { csrf, action: "archive-plan", planId: globexPlanId } });
    expect(archive.status()).to.equal(404);
    expect((await globex.api.get(`/api/v1/subscriptions/${globexSubscriptionId}`)).body.status).to.equal("ACTIVE");
    expect((await globex.api.get(`/api/v1/subscription-plans/${globexPlanId}`)).body.status).to.equal("ACTIVE");
    expect(await sys.sql(`select id from subscription_refunds where charge_id = ?`, [globexCharge.id])).to.have.length(0);

    const noToken = await admin.request.post(`${sys.baseUrl}/dashboard/subscriptions/${subs.yearly!.id}`, { form: { action: "cancel" } });
    expect(noToken.status()).to.equal(403);
    const noTokenPlan = await admin.request.post(`${sys.baseUrl}/dashboard/plans`, { form: { action: "create-plan", name: "x" } });
    expect(noTokenPlan.status()).to.equal(403);
    expect((await acme.api.get(`/api/v1/subscriptions/${subs.yearly!.id}`)).body.status).to.equal("ACTIVE");
  });

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    it(`every page fits ${name} and is axe-clean`, async () => {
      const context = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile, storageState: await admin.context().storageState() });
      try {
        const page = await context.newPage();
        const [plan] = await sys.sql(`select id from plans where merchant_id = ? order by created_at limit 1`, [acme.id]);
        const pages: [string, string][] = [
          ["overview", "/dashboard"],
          ["subscriptions", "/dashboard/subscriptions"],
          ["subscription", `/dashboard/subscriptions/${subs.monthly1!.id}`],
          ["plans", "/dashboard/plans"],
          ["plan", `/dashboard/plans/${plan.id}`],
        ];
        for (const [stage, path] of pages) {
          const res = await page.goto(`${sys.baseUrl}${path}`);
          expect(res!.status(), stage).to.equal(200);
          expect(await seriousA11yViolations(page), stage).to.deep.equal([]);
          expect(await overflowingElements(page), stage).to.deep.equal([]);
          await page.screenshot({ path: `/tmp/dash-a-${stage}-${viewport.width}.png`, fullPage: true });
        }
        // A refusal page too (a plan form with an error beside its field).
        await page.goto(`${sys.baseUrl}/dashboard/plans`);
        await page.fill("input[name=name]", "Broken");
        await page.fill("input[name=amount]", "-1");
        expect((await submit(page, "button[name=action][value=create-plan]")).status()).to.equal(400);
        expect(await seriousA11yViolations(page), "plan error").to.deep.equal([]);
        expect(await overflowingElements(page), "plan error").to.deep.equal([]);
        await page.screenshot({ path: `/tmp/dash-a-plan-error-${viewport.width}.png`, fullPage: true });
      } finally {
        await context.close();
      }
    });
  }
});
