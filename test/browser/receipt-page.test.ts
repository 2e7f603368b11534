import { expect } from "chai";
import { mkdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { createPlan, createSubscription, createWalletUser, localUrl, PIN, type WalletUserFixture } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";

/** Where the receipt page's screenshots are written (one per width), for a person to look at. */
const SHOTS = join(tmpdir(), "billing-screenshots");

/**
 * Issue 25's pages in a real headless Chromium with JavaScript off, at 1280
 * and 390 px, axe clean: the approval page shows what a discount does (the
 * discounted amount, for how many charges, the amount after) and the funding
 * options quote the discounted amount; the self-service page links each paid
 * charge to its receipt; the receipt page (no login, noindex, printable) shows
 * everything the PDF does and links to it.
 */
describe("discounted approval and the receipt page (headless Chromium)", function () {
  this.timeout(90_000);
  let api: ApiClient;
  let browser: Browser;

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    api = (await sys.createMerchant("Acme Streaming")).api;
    mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
  });

  async function logIn(page: Page, user: WalletUserFixture) {
    await page.fill("input[name=email]", user.email);
    await page.fill("input[name=password]", user.password);
    await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=login]")]);
  }

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    describe(name, () => {
      let context: BrowserContext;
      beforeEach(async () => {
        context = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      });
      afterEach(async () => context?.close());

      it("approval with a 30 % off coupon for 3 charges: the customer sees 7.35 USD for the first 3 charges, then 10.50 USD, and pays 7.35", async () => {
        const plan = await createPlan(api, { name: "Pro Monthly", amount: "10.50", currency: "USD", maximumChargeAmount: "15" });
        const coupon = (await api.post("/api/v1/coupons", { name: "Welcome", percentOff: "30", duration: "REPEATING", durationInPeriods: 3 })).body;
        const user = await createWalletUser(sys, { USDT_TRON: "8" });
        const s = await createSubscription(api, plan.id, user.id, { couponId: coupon.id });
        const page = await context.newPage();
        await page.goto(localUrl(sys, s.authorizationUrl));
        const summary = (await page.textContent(".summary"))!;
        for (const part of [
          "Price",
          "10.50 USD / month",
          "Discount",
          "3.15 USD off the first 3 charges",
          "For the first 3 charges",
          "7.35 USD",
          "After that",
          "Due today",
          "Maximum per charge",
          "15.00 USD",
        ]) {
          expect(summary).to.include(part);
        }
        expect(summary).to.include("7.35 USD for the first 3 charges, then 10.50 USD every month");
        await logIn(page, user);
        // 8 USDT_TRON covers the discounted 7.35, not the list price: the option is choosable and quotes the discounted amount.
        const option = page.locator("label.asset", { has: page.locator("[name=fundingAsset][value=USDT_TRON]") });
        expect(await option.textContent()).to.include("Due now: 7.35 USDT_TRON");
        expect(await page.isDisabled("[name=fundingAsset][value=USDT_TRON]")).to.equal(false);
        expect(await page.textContent("button[name=action][value=approve]")).to.include("Subscribe and pay 7.35 USD");
        expect(await seriousA11yViolations(page)).to.deep.equal([]);
        expect(await overflowingElements(page)).to.deep.equal([]);
        await page.check("[name=fundingAsset][value=USDT_TRON]");
        await page.fill("input[name=pin]", PIN);
        await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=approve]")]);
        const sub = (await api.get(`/api/v1/subscriptions/${s.subscriptionId}`)).body;
        expect(sub.status).to.equal("ACTIVE");
        const [charge] = (await api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`)).body.data;
        expect(charge).to.include({ subtotal: "10.5", discountAmount: "3.15", amount: "7.35" });
      });

      it("receipt page: the self-service page links the charge; the page shows every field and its refund, noindex, no login, a PDF link; screenshot", async () => {
        const plan = await createPlan(api, { name: "Плюс Annual", amount: "120", currency: "USD", interval: "YEAR" });
        const coupon = (await api.post("/api/v1/coupons", { name: "Ten off", amountOff: "10", currency: "USD", duration: "ONCE" })).body;
        const user = await createWalletUser(sys, { USDT_TRON: "200" });
        const s = await createSubscription(api, plan.id, user.id, { couponId: coupon.id });
        const approve = await context.newPage();
        await approve.goto(localUrl(sys, s.authorizationUrl));
        await logIn(approve, user);
        await approve.check("[name=fundingAsset][value=USDT_TRON]");
        await approve.fill("input[name=pin]", PIN);
        await Promise.all([approve.waitForLoadState("load"), approve.click("button[name=action][value=approve]")]);
        const [charge] = (await api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`)).body.data;
        expect(charge.receiptUrl).to.be.a("string");
        const refund = await api.post("/api/v1/refunds", { chargeId: charge.id, amount: "25" });
        expect(refund.status, refund.text).to.be.oneOf([200, 201, 202]);
        await eventually(async () => ((await api.get(`/api/v1/refunds/${refund.body.id}`)).body.status === "SUCCEEDED" ? true : undefined), 15_000, "refund");

        // The customer's own page links the charge to its receipt.
        const self = await context.newPage();
        await self.goto(`${sys.baseUrl}/wallet/subscriptions`);
        await logIn(self, user);
        const link = self.locator(`section[data-subscription-id="${s.subscriptionId}"] tbody tr a`, { hasText: "Receipt" });
        const href = await link.getAttribute("href");
        expect(href).to.equal(charge.receiptUrl);
        expect(await seriousA11yViolations(self)).to.deep.equal([]);
        expect(await overflowingElements(self)).to.deep.equal([]);

        // A fresh context: no cookie, no login.
        const anonymous = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
        try {
          const page = await anonymous.newPage();
          const receiptPath = new URL(charge.receiptUrl).pathname;
          const res = await page.goto(`${sys.baseUrl}${receiptPath}`);
          expect(res!.status()).to.equal(200);
          expect(res!.headers()["x-robots-tag"]).to.equal("noindex");
          expect(res!.headers()["cache-control"]).to.equal("no-store");
          expect(res!.headers()["referrer-policy"]).to.equal("no-referrer");
          expect(await page.getAttribute("meta[name=robots]", "content")).to.equal("noindex");
          const text = (await page.textContent("main"))!;
          for (const part of [
            "Acme Streaming",
            `Receipt ${charge.receiptNumber}`,
            "Плюс Annual, every year",
            "Subtotal",
            "120.00 USD",
            "Discount",
            "10.00 USD",
            "Amount paid",
            "110.00 USD",
            "Paid in",
            "110.00 USDT_TRON",
            "Rate",
            "1 USD = 1.00 USDT_TRON",
            "Rate time",
            "UTC",
            "Ledger transaction",
            charge.walletTransactionId,
            "Refunds",
            "25.00 USD (25.00 USDT_TRON)",
          ]) {
            expect(text).to.include(part);
          }
          expect(text).to.include(charge.periodStart.slice(0, 10)).and.include(charge.periodEnd.slice(0, 10));
          expect(await page.title()).to.include(charge.receiptNumber);
          expect(await seriousA11yViolations(page)).to.deep.equal([]);
          expect(await overflowingElements(page)).to.deep.equal([]);
          const pdfHref = await page.getAttribute("a[href$='.pdf']", "href");
          expect(pdfHref).to.equal(`${receiptPath}.pdf`);
          const pdf = await fetch(`${sys.baseUrl}${pdfHref}`);
          expect(pdf.status).to.equal(200);
          expect(pdf.headers.get("content-type")).to.equal("application/pdf");
          // Printable: the print style leaves the link out.
          await page.emulateMedia({ media: "print" });
          expect(await page.isVisible("a[href$='.pdf']")).to.equal(false);
          await page.emulateMedia({ media: "screen" });
          const shot = join(SHOTS, `receipt-${viewport.width}.png`);
          await page.screenshot({ path: shot, fullPage: true });
          expect(statSync(shot).size).to.be.greaterThan(5_000);

          const missing = await page.goto(`${sys.baseUrl}/receipts/${"A".repeat(32)}`);
          expect(missing!.status()).to.equal(404);
          expect(await page.textContent("h1")).to.equal("Receipt not found");
          expect((await page.goto(`${sys.baseUrl}/receipts/not-a-token`))!.status()).to.equal(404);
        } finally {
          await anonymous.close();
        }
      });
    });
  }
});
