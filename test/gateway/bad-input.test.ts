import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { sameDecimal } from "../../services/platform/exact-numbers.ts";

const PLANS = "/api/v1/subscription-plans";
const plan = (extra: Record<string, unknown> = {}) => ({ name: "Pro", amount: "10", currency: "USD", interval: "MONTH", ...extra });

/** Bad input found by trying the API as a new user would: each is a clean 4xx naming the field. */
describe("bad input answered cleanly", () => {
  let api: ApiClient;
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    ({ api } = await sys.createMerchant());
  });

  it("a payment-order amount that converts out of range is a 400 naming amount", async () => {
    const res = await api.post("/api/v1/payment-orders", {
      externalId: "bad-12",
      externalCustomerId: "c",
      asset: "ETH",
      amount: "99999999999999999999",
      currency: "BTC",
    });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error).to.equal("INVALID_REQUEST");
    expect(res.body.message).to.match(/^amount: /);
  });

  describe("metadata numbers (stored exactly or refused)", () => {
    for (const [raw, path, becomes] of [
      ['{"n":12345678901234567890123}', "metadata.n", "1.2345678901234568e+22"],
      ['{"f":0.1000000000000000055511151231257827}', "metadata.f", "0.1"],
      ['{"e":1e400}', "metadata.e", "null"],
      ['{"deep":{"list":[1,{"x":9007199254740993}]}}', "metadata.deep.list.1.x", "9007199254740992"],
    ] as const) {
      it(`refuses ${raw} naming ${path}`, async () => {
        const body = JSON.stringify(plan()).replace(/}$/, `,"metadata":${raw}}`);
        const res = await api.request("POST", PLANS, { raw: body, headers: { "content-type": "application/json" } });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.contain(path).and.contain(becomes).and.contain("string");
        expect(res.body.details[0]).to.include({ field: path, rule: "exactNumber" });
      });
    }

    it("keeps numbers that come back with the same value, exactly", async () => {
      const raw = '{"a":0.1,"b":2.50,"c":1e2,"d":-0,"e":1234567890123456,"f":[1.5e-7,{"g":9007199254740991}],"big":"12345678901234567890123"}';
      const body = JSON.stringify(plan({ name: "Exact" })).replace(/}$/, `,"metadata":${raw}}`);
      const res = await api.request("POST", PLANS, { raw: body, headers: { "content-type": "application/json" } });
      expect(res.status, res.text).to.equal(201);
      const expected = { a: 0.1, b: 2.5, c: 100, d: 0, e: 1234567890123456, f: [1.5e-7, { g: 9007199254740991 }], big: "12345678901234567890123" };
      expect(res.body.metadata).to.deep.equal(expected);
      expect((await api.get(`${PLANS}/${res.body.id}`)).body.metadata).to.deep.equal(expected);
    });

    it("compares number spellings by value", () => {
      expect(sameDecimal("2.50", "2.5")).to.equal(true);
      expect(sameDecimal("1E+2", "100")).to.equal(true);
      expect(sameDecimal("0.000", "0")).to.equal(true);
      expect(sameDecimal("1e400", "Infinity")).to.equal(false);
      expect(sameDecimal("0.30000000000000001", "0.3")).to.equal(false);
    });
  });

  it("accepts a free plan (amount 0, issue 25), refuses a name of only spaces; trims names", async () => {
    const zero = await api.post(PLANS, plan({ amount: "0.000" }));
    expect(zero.status).to.equal(201);
    expect(zero.body.amount).to.equal("0");
    const blank = await api.post(PLANS, plan({ name: "   " }));
    expect(blank.status).to.equal(400);
    expect(blank.body.message).to.match(/^name: /);
    const padded = await api.post(PLANS, plan({ name: "  Gold  " }));
    expect(padded.status).to.equal(201);
    expect(padded.body.name).to.equal("Gold");
  });

  it("trims an email with surrounding spaces, as the README says", async () => {
    const res = await sys.admin.post("/admin/v1/wallet-users", { email: "  Spaced.User@Example.com ", password: "password-123", pin: "123456" });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.email).to.equal("spaced.user@example.com");
    const bad = await sys.admin.post("/admin/v1/wallet-users", { email: "no at sign", password: "password-123", pin: "123456" });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/^email: /);
  });

  describe("emails: one rule everywhere (trimmed, compared case-insensitively)", () => {
    const subscriptionBody = (planId: string, customerEmail: unknown) => ({
      externalReference: `email-${Math.random().toString(36).slice(2)}`,
      planId,
      customerEmail,
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    });

    it("a subscription's customerEmail with surrounding spaces finds its wallet user and is stored trimmed, its case kept", async () => {
      const user = (await sys.admin.post("/admin/v1/wallet-users", { email: " Trim.Me@Example.com\t", password: "password-123", pin: "123456" })).body;
      expect(user.email).to.equal("trim.me@example.com");
      const planId = (await api.post(PLANS, plan({ name: "Email plan" }))).body.id;
      for (const sent of ["  Trim.Me@EXAMPLE.com  ", "\tTRIM.ME@example.com\n", "trim.me@example.com"]) {
        const res = await api.post("/api/v1/subscriptions", subscriptionBody(planId, sent));
        expect(res.status, `${JSON.stringify(sent)}: ${res.text}`).to.equal(201);
        const stored = (await api.get(`/api/v1/subscriptions/${res.body.subscriptionId}`)).body;
        expect(stored.customerEmail).to.equal(sent.trim());
        expect(stored.walletUserId).to.equal(user.id);
      }
    });

    it("what is not an email after trimming is a 400 naming the field, on both", async () => {
      const planId = (await api.post(PLANS, plan({ name: "Email plan 2" }))).body.id;
      for (const bad of ["   ", "no at sign", " a@b ", "a b@example.com"]) {
        const sub = await api.post("/api/v1/subscriptions", subscriptionBody(planId, bad));
        expect(sub.status, bad).to.equal(400);
        expect(sub.body.message, bad).to.match(/^customerEmail: /);
        const user = await sys.admin.post("/admin/v1/wallet-users", { email: bad, password: "password-123", pin: "123456" });
        expect(user.status, bad).to.equal(400);
        expect(user.body.message, bad).to.match(/^email: /);
      }
    });
  });

  describe("JSON keys: a key sent twice or __proto__ is refused, naming it", () => {
    const post = (raw: string) => api.request("POST", PLANS, { raw, headers: { "content-type": "application/json" } });
    const base = '"name":"Keys","currency":"USD","interval":"MONTH"';

    for (const [raw, field] of [
      [`{${base},"amount":"1","amount":"2"}`, "amount"],
      [`{${base},"amount":"1","\\u0061mount":"2"}`, "amount"],
      [`{${base},"amount":"1","metadata":{"a":1,"b":{"c":1,"c":2}}}`, "metadata.b.c"],
      [`{${base},"amount":"1","metadata":{"list":[{"x":1},{"x":2,"x":3}]}}`, "metadata.list.1.x"],
    ] as const) {
      it(`${raw} → 400 naming ${field}`, async () => {
        const before = (await api.get(`${PLANS}?limit=100`)).body.data.length;
        const res = await post(raw);
        expect(res.status, res.text).to.equal(400);
        expect(res.body).to.include({ error: "INVALID_REQUEST", message: `${field}: this key appears more than once in its object; send it once` });
        expect(res.body.details[0]).to.include({ field, rule: "duplicateKey" });
        expect((await api.get(`${PLANS}?limit=100`)).body.data.length).to.equal(before);
      });
    }

    for (const [raw, field] of [
      [`{${base},"amount":"1","metadata":{"__proto__":{"admin":true}}}`, "metadata.__proto__"],
      [`{"__proto__":{},${base},"amount":"1"}`, "__proto__"],
      [`{${base},"amount":"1","metadata":{"\\u005f_proto__":1}}`, "metadata.__proto__"],
    ] as const) {
      it(`${raw} → 400 naming ${field} and the rule, not "not valid JSON"`, async () => {
        const res = await post(raw);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.match(new RegExp(`^${field.replace(/\./g, "\\.")}: this key is not allowed`));
        expect(res.body.details[0]).to.include({ field, rule: "forbiddenKey" });
      });
    }

    it("the same key in different objects, or a key's name inside a string, is fine; broken JSON is still MALFORMED_JSON", async () => {
      const ok = await post(`{${base},"amount":"1","metadata":{"name":"x","amount":"\\"amount\\":2","n":{"name":1}}}`);
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.metadata).to.deep.equal({ name: "x", amount: '"amount":2', n: { name: 1 } });
      const broken = await post(`{${base},"amount":"1","amount":`);
      expect(broken.status).to.equal(400);
      expect(broken.body.error).to.equal("MALFORMED_JSON");
    });
  });

  it("names the whole-seconds rule when the sandbox clock is advanced by a fraction", async () => {
    const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 1.5 });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.contain("seconds").and.contain("whole number");
  });

  it("scopes a credit's Idempotency-Key to the wallet user it credits", async () => {
    const users = [];
    for (const email of ["topup-a@example.com", "topup-b@example.com"]) {
      users.push((await sys.admin.post("/admin/v1/wallet-users", { email, password: "password-123", pin: "123456" })).body.id as string);
    }
    const key = { "idempotency-key": "topup-1" };
    const first = await sys.admin.post(`/admin/v1/wallet-users/${users[0]}/credits`, { asset: "USDT_TRON", amount: "5" }, key);
    expect(first.status, first.text).to.equal(201);
    const other = await sys.admin.post(`/admin/v1/wallet-users/${users[1]}/credits`, { asset: "USDT_TRON", amount: "5" }, key);
    expect(other.status, other.text).to.equal(201);
    expect(other.body.walletUserId).to.equal(users[1]);
    expect(other.body.transactionId).not.to.equal(first.body.transactionId);
    // The same user with the same key is still the same credit, replayed.
    const again = await sys.admin.post(`/admin/v1/wallet-users/${users[0]}/credits`, { asset: "USDT_TRON", amount: "5" }, key);
    expect(again.status).to.equal(201);
    expect(again.body.transactionId).to.equal(first.body.transactionId);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    for (const id of users) {
      const balances = (await sys.admin.get(`/admin/v1/wallet-users/${id}`)).body.balances as { asset: string; balance: string }[];
      expect(balances.find((b) => b.asset === "USDT_TRON")?.balance).to.equal("5");
    }
  });
});
