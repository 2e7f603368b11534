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
const endpoint = { id: "i", url: "u", description: "d", events: "e", status: "ENABLED", statusText: "s", disabledReason: "r", created: "c" };
const MODELS: { [K in keyof PageModels]: PageModels[K] } = {
  "dashboard/sign-in": { action: "/a", csrf: "c", step: "code", email: "e", error: "e" },
  "dashboard/invite": { action: "/a", csrf: "c", merchantName: "m", email: "e", roleText: "r", minLength: 12, error: "e" },
  "dashboard/enrol": { action: "/a", csrf: "c", secret: "s", secretGrouped: "s", qr: { viewBox: "0 0 1 1", path: "M0 0h1v1h-1z" }, error: "e" },
  "dashboard/recovery-codes": { codes: ["a", "b"] },
  "dashboard/message": { frame, heading: "h", message: "m" },
  "dashboard/overview": {
    frame,
    balances: [{ asset: "a", available: "a", pending: "p" }],
    activeSubscriptions: 1,
    pastDueSubscriptions: 1,
    trialingSubscriptions: 1,
    mrr: [{ currency: "c", amount: "a", value: "v", subscriptions: 2 }],
    chargesSucceeded: 1,
    chargesFailed: 1,
    window: "w",
    charts: [
      {
        currency: "c",
        title: "t",
        description: "d",
        width: 10,
        height: 10,
        bars: [{ x: 1, y: 1, width: 1, height: 1, date: "d", text: "t" }],
        rows: [{ date: "d", text: "t", charges: 1 }],
        axis: { top: "t", first: "f", last: "l" },
      },
    ],
  },
  "dashboard/subscriptions": {
    frame,
    q: "q",
    status: "s",
    statuses: [{ value: "v", label: "l", selected: true }],
    rows: [{ id: "i", href: "/h", customer: "c", reference: "r", plan: "p", status: "s", statusText: "s", created: "c" }],
    nextHref: "/n",
    previousHref: "/p",
    error: "e",
  },
  "dashboard/subscription": {
    frame,
    id: "i",
    action: "/a",
    status: "s",
    statusText: "s",
    facts: [{ label: "l", value: "v" }],
    authorization: [{ label: "l", value: "v" }],
    actions: [{ value: "pause", label: "l" }],
    canRefund: true,
    refundKey: "k",
    charges: [
      {
        id: "i",
        date: "d",
        amount: "a",
        asset: "a",
        status: "s",
        statusText: "s",
        refunded: "r",
        refundable: true,
        currency: "c",
        refunds: [{ date: "d", amount: "a", assetAmount: "a", statusText: "s" }],
      },
    ],
    events: [{ id: "i", type: "t", date: "d", json: "j" }],
    error: "e",
    notice: "n",
  },
  "dashboard/plans": {
    frame,
    status: "s",
    statuses: [{ value: "v", label: "l", selected: true }],
    rows: [{ id: "i", href: "/h", name: "n", price: "p", status: "s", statusText: "s", archived: false }],
    nextHref: "/n",
    canManage: true,
    form: { name: "n", description: "d", amount: "a", currency: "c", interval: "i", intervalCount: "i", trialDays: "t", maximumChargeAmount: "m" },
    currencies: [{ value: "v", selected: true }],
    intervals: [{ value: "v", label: "l", selected: true }],
    error: { field: "name", message: "m" },
    notice: "n",
  },
  "dashboard/plan": {
    frame,
    id: "i",
    action: "/a",
    price: "p",
    status: "s",
    statusText: "s",
    archived: true,
    canManage: true,
    form: { name: "n", description: "d" },
    error: { field: "name", message: "m" },
    notice: "n",
  },
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
  "dashboard/api-keys": {
    frame,
    canManage: true,
    keys: [
      { id: "i", prefix: "p", created: "c", lastUsed: "l", revoked: "r" },
      { id: "j", prefix: "p", created: "c", lastUsed: "l" },
    ],
    createdKey: "k",
    createdKeyId: "i",
    nextUrl: "/n",
    firstUrl: "/f",
    error: "e",
    notice: "n",
  },
  "dashboard/webhooks": {
    frame,
    canManage: true,
    endpoints: [endpoint],
    secret: "s",
    url: "u",
    description: "d",
    enabledEvents: "e",
    nextUrl: "/n",
    error: "e",
  },
  "dashboard/webhook-endpoint": {
    frame,
    canManage: true,
    canRedeliver: true,
    endpoint,
    path: "/p",
    secret: "s",
    filters: { status: "s", eventId: "e" },
    statuses: [{ value: "v", label: "l", selected: true }],
    deliveries: [
      {
        id: "i",
        eventId: "e",
        eventType: "t",
        status: "s",
        statusText: "s",
        created: "c",
        next: "n",
        attempts: [{ number: 1, at: "a", outcome: "o", statusCode: "s", duration: "d", error: "e", excerpt: "x" }],
      },
    ],
    nextUrl: "/n",
    firstUrl: "/f",
    error: "e",
    notice: "n",
  },
  "dashboard/events": {
    frame,
    canRedeliver: true,
    types: [{ value: "v", selected: true }],
    events: [{ id: "i", type: "t", created: "c", json: "j" }],
    nextUrl: "/n",
    error: "e",
    notice: "n",
  },
  "dashboard/refunds": {
    frame,
    filters: { chargeId: "c", subscriptionId: "s" },
    refunds: [{ id: "i", created: "c", amount: "a", assetAmount: "a", status: "s", statusText: "s", chargeId: "c", subscriptionId: "s", reason: "r" }],
    nextUrl: "/n",
    error: "e",
  },
  "dashboard/balance": {
    frame,
    balances: [{ asset: "a", available: "a", pending: "p" }],
    filters: { createdAfter: "c" },
    assets: [{ value: "v", label: "l", selected: true }],
    types: [{ value: "v", label: "l", selected: false }],
    transactions: [{ id: "i", created: "c", type: "t", typeText: "t", amount: "a", balanceAfter: "b", source: "s" }],
    nextUrl: "/n",
    error: "e",
  },
  "dashboard/payouts": {
    frame,
    canManage: true,
    canActivateNow: true,
    destinations: [{ id: "i", asset: "a", network: "n", address: "a", label: "l", status: "PENDING_ACTIVATION", statusText: "s", activatesAt: "a" }],
    payable: [{ id: "i", label: "l", selected: true }],
    assets: [{ value: "v", selected: true }],
    statuses: [{ value: "v", label: "l", selected: true }],
    payouts: [{ id: "i", created: "c", amount: "a", fee: "f", status: "s", statusText: "s", to: "t", txHash: "h", failure: "f", cancellable: true }],
    address: "a",
    label: "l",
    amount: "a",
    idempotencyKey: "k",
    nextUrl: "/n",
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
    fallbacks: [
      {
        name: "fallbackAsset1",
        id: "f",
        label: "l",
        options: [
          { value: "", label: "None", selected: false },
          { value: "v", label: "l", selected: true },
        ],
      },
    ],
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
        fallbacks: [
          {
            name: "fallbackAsset1",
            id: "f",
            label: "l",
            options: [
              { value: "", label: "None", selected: true },
              { value: "v", label: "l", selected: false },
            ],
          },
        ],
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
