import { expect } from "chai";
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import type { TestSystem } from "./system.ts";

/** What a dashboard test needs to drive a member: invite, enrol, log in, compute codes. */
export interface MemberFixture {
  id: string;
  email: string;
  password: string;
  secret: string;
  recoveryCodes: string[];
  /** The last TOTP time-step used (a code works once). */
  lastStep: number;
}

const stepNow = () => Math.floor(Date.now() / 30_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A code the service accepts now: of a step after the member's last one and
 * at most one step ahead of the clock (waits for the clock when it must).
 */
export async function nextCode(member: MemberFixture): Promise<string> {
  const target = Math.max(member.lastStep + 1, stepNow());
  while (target > stepNow() + 1) await sleep(250);
  member.lastStep = target;
  return totpCode(member.secret, target + 0.5 - Date.now() / 30_000);
}

export const PASSWORD = "correct horse battery staple 42";

/** The code of `secret` `steps` 30-second steps from now (1 = the next one: accepted once the current one is spent). */
export function totpCode(secret: string, steps = 0): string {
  const totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) });
  return totp.generate({ timestamp: Date.now() + Math.round(steps * 30_000) });
}

let serial = 0;
export const uniqueEmail = (who: string) => `${who}.${process.pid}.${Date.now()}.${++serial}@example.com`;

/** The operator's invite (POST /admin/v1/merchants/{id}/members), as a path on the test gateway. */
export async function invite(sys: TestSystem, merchantId: string, role: string, email = uniqueEmail(role.toLowerCase())) {
  const res = await sys.admin.post(`/admin/v1/merchants/${merchantId}/members`, { email, role });
  expect(res.status, res.text).to.equal(201);
  return { id: res.body.id as string, email, invitePath: new URL(res.body.inviteUrl).pathname };
}

export async function submit(page: Page, selector: string) {
  const [response] = await Promise.all([page.waitForEvent("response", (r) => r.request().method() === "POST"), page.click(selector)]);
  await page.waitForLoadState("load");
  return response;
}

/** Invite page → password → enrolment (code from [data-totp-secret]) → recovery codes → the dashboard. */
export async function acceptInviteAndEnrol(
  page: Page,
  sys: TestSystem,
  invited: { id: string; email: string; invitePath: string },
  check?: (stage: string) => Promise<void>,
): Promise<MemberFixture> {
  await page.goto(`${sys.baseUrl}${invited.invitePath}`);
  await check?.("invite");
  await page.fill("input[name=password]", PASSWORD);
  await submit(page, "button[name=action][value=accept-invite]");
  expect(new URL(page.url()).pathname).to.equal("/dashboard/two-factor");
  await check?.("enrol");
  const secret = (await page.getAttribute("[data-totp-secret]", "data-totp-secret"))!;
  const lastStep = stepNow();
  await page.fill("input[name=totp]", totpCode(secret, lastStep + 0.5 - Date.now() / 30_000));
  const res = await submit(page, "button[name=action][value=enable-totp]");
  expect(res.status()).to.equal(200);
  const recoveryCodes = await page.locator("[data-recovery-codes] code").allTextContents();
  expect(recoveryCodes).to.have.length(10);
  await check?.("recovery-codes");
  await Promise.all([page.waitForURL(/\/dashboard$/), page.click("text=I have saved them")]);
  return { id: invited.id, email: invited.email, password: PASSWORD, secret, recoveryCodes, lastStep };
}

export async function logIn(page: Page, sys: TestSystem, member: MemberFixture, code: string) {
  await page.goto(`${sys.baseUrl}/dashboard/login`);
  await page.fill("input[name=email]", member.email);
  await page.fill("input[name=password]", member.password);
  await submit(page, "button[name=action][value=login]");
  await page.fill("input[name=totp]", code);
  return submit(page, "button[name=action][value=verify]");
}

export async function logOut(page: Page) {
  await submit(page, "button[name=action][value=logout]");
}
