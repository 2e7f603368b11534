import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { useTestSystem } from "../support/system.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { acceptInviteAndEnrol, invite, logIn, logOut, nextCode, submit, uniqueEmail, type MemberFixture } from "../support/dashboard.ts";

/**
 * The dashboard's team members and login (issue 24, part 1) in headless
 * Chromium with JavaScript off: the operator's invite, the invite page
 * (password rules), mandatory TOTP enrolment with recovery codes, the
 * two-step login (a code works once, a recovery code once), the session
 * cookie, logout, CSRF, roles on the Team page (invite, change role and
 * remove with a fresh code, the last owner kept), another merchant's member
 * as a 404, at 1280 and 390 px with axe.
 */
describe("dashboard: team members and login (headless Chromium)", function () {
  this.timeout(120_000);
  let browser: Browser;
  let acme: { id: string };
  let globex: { id: string };

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    acme = await sys.createMerchant("Acme Streaming");
    globex = await sys.createMerchant("Globex News");
  });
  after(async () => {
    await browser?.close();
  });

  describe("POST /admin/v1/merchants/{id}/members", () => {
    it("invites with a single-use inviteUrl, validates like every operator route, and refuses a second member with the same email", async () => {
      const email = uniqueEmail("Owner");
      const res = await sys.admin.post(`/admin/v1/merchants/${acme.id}/members`, { email, role: "OWNER" });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ object: "member", email: email.toLowerCase(), role: "OWNER", status: "INVITED" });
      expect(res.body.id).to.be.a("string");
      expect(res.body.createdAt).to.be.a("string");
      expect(res.body.inviteUrl).to.match(/\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);
      expect((await sys.admin.post(`/admin/v1/merchants/${acme.id}/members`, { email, role: "VIEWER" })).status).to.equal(409);
      expect((await sys.admin.post(`/admin/v1/merchants/${acme.id}/members`, { email: "x@example.com", role: "KING" })).status).to.equal(400);
      expect((await sys.admin.post(`/admin/v1/merchants/${acme.id}/members`, { email: "not-an-email", role: "VIEWER" })).status).to.equal(400);
      expect(
        (await sys.admin.post(`/admin/v1/merchants/00000000-0000-4000-8000-000000000000/members`, { email: uniqueEmail("x"), role: "VIEWER" })).status,
      ).to.equal(404);
      expect((await sys.http.post(`/admin/v1/merchants/${acme.id}/members`, { email: uniqueEmail("x"), role: "VIEWER" })).status).to.equal(401);
      // Nothing secret is stored in clear: the password hash is argon2id, the TOTP secret sealed, the token a digest.
      const [row] = await sys.sql(`select invite_token_hash, password_hash, totp_secret from members where id = ?`, [res.body.id]);
      expect(row.invite_token_hash).to.match(/^[0-9a-f]{64}$/);
      expect(res.body.inviteUrl).not.to.include(row.invite_token_hash);
    });
  });

  describe("invite, enrolment, login, logout", () => {
    let context: BrowserContext;
    let page: Page;
    beforeEach(async () => {
      context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
      page = await context.newPage();
    });
    afterEach(async () => context?.close());

    it("invite → password (common ones refused) → TOTP from [data-totp-secret] → 10 recovery codes; the invite works once", async () => {
      const invited = await invite(sys, acme.id, "OWNER");
      await page.goto(`${sys.baseUrl}${invited.invitePath}`);
      expect(await page.textContent("main"))
        .to.include("Acme Streaming")
        .and.include(invited.email);
      for (const [weak, why] of [
        ["short pass", "at least 12"],
        ["password1234", "too common"],
        ["iloveyou1234", "too common"],
        ["abababababab", "too common"],
      ] as const) {
        await page.fill("input[name=password]", weak);
        const res = await submit(page, "button[name=action][value=accept-invite]");
        expect(res.status(), weak).to.equal(422);
        expect(await page.textContent("[role=alert]"), weak).to.include(why);
      }
      const member = await acceptInviteAndEnrol(page, sys, invited);
      expect(await page.locator('nav[aria-label="Dashboard"] a', { hasText: "Overview" }).count()).to.equal(1);
      expect(member.secret).to.match(/^[A-Z2-7]{32}$/);
      const [row] = await sys.sql(`select status, password_hash, totp_secret, totp_last_step, invite_token_hash from members where id = ?`, [member.id]);
      expect(row.status).to.equal("ACTIVE");
      expect(row.password_hash).to.match(/^\$argon2id\$/);
      expect(row.totp_secret).to.match(/^v1\./).and.not.include(member.secret);
      expect(row.invite_token_hash).to.equal(null);
      const codes = await sys.sql(`select code_hash from member_recovery_codes where member_id = ?`, [member.id]);
      expect(codes.map((c) => c.code_hash))
        .to.have.length(10)
        .and.not.include.members(member.recoveryCodes);
      // Single use: the link now answers 404.
      const again = await page.goto(`${sys.baseUrl}${invited.invitePath}`);
      expect(again!.status()).to.equal(404);
      expect(await page.textContent("h1")).to.include("not valid");
    });

    it("logs in with password then code; a code used once is refused; a recovery code works once; new session id, strict cookie, logout", async () => {
      const member = await acceptInviteAndEnrol(page, sys, await invite(sys, acme.id, "ADMIN"));
      await logOut(page);
      expect(new URL(page.url()).pathname).to.equal("/dashboard/login");
      // Logged out: the dashboard sends to the login page.
      await page.goto(`${sys.baseUrl}/dashboard`);
      expect(new URL(page.url()).pathname).to.equal("/dashboard/login");

      await page.fill("input[name=email]", member.email);
      await page.fill("input[name=password]", "wrong password here");
      expect((await submit(page, "button[name=action][value=login]")).status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("incorrect");

      const before = (await context.cookies()).find((c) => c.name === "billing_dashboard")!;
      // The code of the enrolment's step is spent: the next step's code is the first accepted.
      const code = await nextCode(member);
      let res = await logIn(page, sys, member, code);
      expect(res.status()).to.equal(303);
      expect(new URL(page.url()).pathname).to.equal("/dashboard");
      const after = (await context.cookies()).find((c) => c.name === "billing_dashboard")!;
      expect(after.value).not.to.equal(before.value);
      expect(after).to.include({ httpOnly: true, sameSite: "Strict", path: "/dashboard", secure: false });
      await logOut(page);

      res = await logIn(page, sys, member, code);
      expect(res.status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("already used");
      // A recovery code instead (lower case and without dashes is fine), once.
      const recovery = member.recoveryCodes[3]!;
      await page.fill("input[name=totp]", recovery.toLowerCase().replaceAll("-", ""));
      res = await submit(page, "button[name=action][value=verify]");
      expect(res.status()).to.equal(303);
      expect(new URL(page.url()).pathname).to.equal("/dashboard");
      await logOut(page);
      res = await logIn(page, sys, member, recovery);
      expect(res.status()).to.equal(401);
    });

    it("a form without the session's CSRF token answers 403; a logged-out POST too", async () => {
      const member = await acceptInviteAndEnrol(page, sys, await invite(sys, acme.id, "OWNER"));
      void member;
      const noToken = await page.request.post(`${sys.baseUrl}/dashboard/team`, { form: { action: "invite-member", email: uniqueEmail("x"), role: "VIEWER" } });
      expect(noToken.status()).to.equal(403);
      const wrongToken = await page.request.post(`${sys.baseUrl}/dashboard/logout`, { form: { action: "logout", csrf: "nope" } });
      expect(wrongToken.status()).to.equal(403);
      const anonymous = await browser.newContext({ javaScriptEnabled: false });
      try {
        expect(
          (
            await (await anonymous.newPage()).request.post(`${sys.baseUrl}/dashboard/login`, { form: { action: "login", email: "a@b.cd", password: "x" } })
          ).status(),
        ).to.equal(403);
      } finally {
        await anonymous.close();
      }
    });

    it("Team: an owner invites, changes a role and removes with a fresh code; the last owner stays; another merchant's member is a 404; a viewer is refused", async () => {
      const owner = await acceptInviteAndEnrol(page, sys, await invite(sys, globex.id, "OWNER"));
      await page.goto(`${sys.baseUrl}/dashboard/team`);
      const email = uniqueEmail("support");
      await page.fill("input[name=email]", email);
      await page.selectOption("#invite-role", "SUPPORT");
      expect((await submit(page, "button[name=action][value=invite-member]")).status()).to.equal(201);
      const invitePath = new URL((await page.textContent("[data-invite-url]"))!.trim()).pathname;
      const [invitedRow] = await sys.sql(`select id from members where email = ?`, [email]);
      const row = page.locator(`form[data-member-id="${invitedRow.id}"]`);

      // Without a code: refused, nothing changed.
      await row.locator("select[name=role]").selectOption("VIEWER");
      expect((await submit(page, `form[data-member-id="${invitedRow.id}"] button[name=action][value=change-role]`)).status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("code");
      await row.locator("select[name=role]").selectOption("VIEWER");
      await row.locator("input[name=totp]").fill(await nextCode(owner));
      expect((await submit(page, `form[data-member-id="${invitedRow.id}"] button[name=action][value=change-role]`)).status()).to.equal(303);
      expect(await page.textContent("[role=status]")).to.include("role is changed");
      expect((await sys.sql(`select role from members where id = ?`, [invitedRow.id]))[0].role).to.equal("VIEWER");

      // The last owner can be neither demoted nor removed (refused before the code is spent).
      const self = page.locator(`form[data-member-id="${owner.id}"]`);
      await self.locator("select[name=role]").selectOption("ADMIN");
      await self.locator("input[name=totp]").fill("000000");
      expect((await submit(page, `form[data-member-id="${owner.id}"] button[name=action][value=change-role]`)).status()).to.equal(409);
      expect(await page.textContent("[role=alert]")).to.include("at least one owner");

      // Another merchant's member id in the form: the 404 page.
      const stranger = await invite(sys, acme.id, "VIEWER");
      const csrf = (await page.getAttribute("input[name=csrf]", "value"))!;
      const foreign = await page.request.post(`${sys.baseUrl}/dashboard/team`, {
        form: { csrf, action: "remove-member", memberId: stranger.id, totp: "000000" },
      });
      expect(foreign.status()).to.equal(404);
      expect((await sys.sql(`select status from members where id = ?`, [stranger.id]))[0].status).to.equal("INVITED");

      // The viewer: no team buttons, and a hand-made POST is a 403 with [role=alert].
      const viewerContext = await browser.newContext({ javaScriptEnabled: false });
      try {
        const viewerPage = await viewerContext.newPage();
        await acceptInviteAndEnrol(viewerPage, sys, { id: invitedRow.id, email, invitePath });
        await viewerPage.goto(`${sys.baseUrl}/dashboard/team`);
        expect(await viewerPage.locator("button[name=action][value=invite-member]").count()).to.equal(0);
        expect(await viewerPage.locator("button[name=action][value=change-role]").count()).to.equal(0);
        const viewerCsrf = (await viewerPage.getAttribute("input[name=csrf]", "value"))!;
        const refused = await viewerPage.request.post(`${sys.baseUrl}/dashboard/team`, {
          form: { csrf: viewerCsrf, action: "invite-member", email: uniqueEmail("x"), role: "OWNER" },
        });
        expect(refused.status()).to.equal(403);
        expect(await refused.text()).to.include('role="alert"');
      } finally {
        await viewerContext.close();
      }

      // Removal with a fresh code: the removed member is logged out at once.
      await page.goto(`${sys.baseUrl}/dashboard/team`);
      await page.locator(`form[data-member-id="${invitedRow.id}"] input[name=totp]`).fill(await nextCode(owner));
      expect((await submit(page, `form[data-member-id="${invitedRow.id}"] button[name=action][value=remove-member]`)).status()).to.equal(303);
      expect(await page.locator(`form[data-member-id="${invitedRow.id}"]`).count()).to.equal(0);
    });
  });

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    it(`every sign-in and team page fits ${name} and is axe-clean`, async () => {
      const context: BrowserContext = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      try {
        const page = await context.newPage();
        const check = async (stage: string) => {
          expect(await seriousA11yViolations(page), stage).to.deep.equal([]);
          expect(await overflowingElements(page), stage).to.deep.equal([]);
          await page.screenshot({ path: `/tmp/dash-shot-${stage}-${viewport.width}.png`, fullPage: true });
        };
        const member: MemberFixture = await acceptInviteAndEnrol(page, sys, await invite(sys, acme.id, "OWNER"), check);
        await check("overview");
        await page.goto(`${sys.baseUrl}/dashboard/team`);
        await check("team");
        await logOut(page);
        await check("login");
        await page.fill("input[name=email]", member.email);
        await page.fill("input[name=password]", member.password);
        await submit(page, "button[name=action][value=login]");
        await check("login-code");
      } finally {
        await context.close();
      }
    });
  }
});
