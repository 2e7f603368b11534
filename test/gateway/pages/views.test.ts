import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pageViews, type PageModels } from "../../../gateway/pages/views.ts";
import { expectOnlyEscaped, HOSTILE } from "../../support/hostile-text.ts";

/** Every string of a model replaced by HOSTILE (booleans and arrays kept), so every field the template shows is hostile. */
function hostile<T>(model: T): T {
  if (typeof model === "string") return HOSTILE as T;
  if (Array.isArray(model)) return model.map(hostile) as T;
  if (model && typeof model === "object") return Object.fromEntries(Object.entries(model).map(([k, v]) => [k, hostile(v)])) as T;
  return model;
}

const choice = { asset: "USDT_TRON", name: "Tether", network: "TRON", balance: "Balance: 1", due: "1", checked: true, disabled: false, note: "n", key: "k" };
const summary = { merchantName: "m", title: "t", price: "p", lines: [{ label: "l", value: "v" }], note: "n", expires: "e" };
const frame = { title: "t", merchantName: "m", email: "e", roleText: "r", csrf: "c", nav: [{ href: "/dashboard", label: "Overview", current: true }] };
const MODELS: { [K in keyof PageModels]: PageModels[K] } = {
  "dashboard/sign-in": { action: "/a", csrf: "c", step: "code", email: "e", error: "e" },
  "dashboard/invite": { action: "/a", csrf: "c", merchantName: "m", email: "e", roleText: "r", minLength: 12, error: "e" },
  "dashboard/enrol": { action: "/a", csrf: "c", secret: "s", secretGrouped: "s", qr: { viewBox: "0 0 1 1", path: "M0 0h1v1h-1z" }, error: "e" },
  "dashboard/recovery-codes": { codes: ["a", "b"] },
  "dashboard/message": { frame, heading: "h", message: "m" },
  "dashboard/overview": { frame },
  "dashboard/team": {
    frame,
    canManage: true,
    members: [{ id: "i", email: "e", role: "OWNER", roleText: "r", statusText: "s", self: true }],
    roles: [{ value: "OWNER", label: "l", description: "d" }],
    inviteEmail: "e",
    inviteUrl: "u",
    invitedEmail: "e",
    error: "e",
    notice: "n",
  },
  "dashboard/audit-log": {
    frame,
    filters: { actor: "a", action: "a", objectId: "o", from: "f", to: "t" },
    errors: ["e"],
    entries: [
      {
        id: "i",
        object: "audit_entry",
        at: "a",
        atText: "a",
        actor: { type: "member", id: "i", label: "l" },
        actorText: "a",
        action: "a",
        objectType: "o",
        objectId: "o",
        ip: "i",
        userAgent: "u",
        requestId: "r",
        objectUrl: "/u",
      },
    ],
    olderUrl: "/o",
    newestUrl: "/n",
  },
  "dashboard/exports": { frame, canExport: true, from: "f", to: "t", errors: ["e"] },
  status: { title: "t", message: "m" },
  "approval-login": { action: "/a", csrf: "c", summary, error: "e", email: "e", cancelLabel: "c" },
  "approval-funding": {
    action: "/a",
    csrf: "c",
    summary,
    notice: "n",
    error: "e",
    email: "e",
    legend: "l",
    choices: [choice, { ...choice, checked: false, disabled: true }],
    approveLabel: "a",
    cancelLabel: "c",
    fallbacks: [{ name: "fallbackAsset1", id: "f", label: "l", options: [{ value: "", label: "None", selected: false }, { value: "v", label: "l", selected: true }] }],
  },
  "self-service-login": { action: "/a", csrf: "c", error: "e", email: "e" },
  claim: { action: "/a", csrf: "c", summary, network: "n", hint: "h", address: "a", error: "e", claimLabel: "c" },
  "claim-done": { title: "t", message: "m", address: "a" },
  "self-service": {
    action: "/a",
    csrf: "c",
    email: "e",
    notice: "n",
    error: "e",
    moreUrl: "/m",
    cards: [
      {
        id: "i",
        status: "s",
        statusText: "s",
        tone: "live",
        live: true,
        merchantName: "m",
        planName: "p",
        price: "p",
        lines: [{ label: "l", value: "v" }],
        charges: [{ status: "s", date: "d", amount: "a", paid: "p", statusText: "s", refunded: "r", receiptUrl: "https://r.example/receipts/t" }],
        error: "e",
        choices: [choice],
        fallbacks: [{ name: "fallbackAsset1", id: "f", label: "l", options: [{ value: "", label: "None", selected: true }, { value: "v", label: "l", selected: false }] }],
        atRisk: "a",
      },
    ],
  },
  receipt: {
    merchantName: "m",
    receiptNumber: "n",
    amount: "a",
    lines: [{ label: "l", value: "v" }],
    refunds: [{ date: "d", amount: "a", assetAmount: "a" }],
    pdfUrl: "/receipts/t.pdf",
  },
};

describe("page views escape by default", () => {
  const views = pageViews();

  for (const name of Object.keys(MODELS) as (keyof PageModels)[]) {
    it(`${name}: every value of the model comes out escaped, in text and in attributes`, () => {
      const html = views.render(name, hostile(MODELS[name]) as never);
      expect(html).to.match(/^<!doctype html>/);
      expect(html).not.to.match(/<script/i);
      expect(expectOnlyEscaped(html, name)).to.be.greaterThan(1);
    });
  }

  it("the blocked sentence of an approval page is escaped as well (it replaces the PIN field)", () => {
    const html = views.render("approval-funding", hostile({ ...MODELS["approval-funding"], blocked: "b" }));
    expect(html).not.to.include('name="pin"');
    expectOnlyEscaped(html, "blocked");
  });

  it("templates write raw output only for the layout's body and for includes of other templates", () => {
    const dir = fileURLToPath(new URL("../../../gateway/pages/views/", import.meta.url));
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".eta"));
    expect(files.length).to.be.greaterThan(10);
    for (const file of files) {
      const raw = [...readFileSync(join(dir, file), "utf8").matchAll(/<%~\s*([\s\S]*?)%>/g)].map((m) => m[1]!.trim());
      for (const expression of raw) expect(expression, `${file}: <%~ ${expression} %>`).to.match(/^(include\("\/[a-z/-]+",|it\.body$)/);
    }
  });
});
