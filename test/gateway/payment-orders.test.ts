import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { createOrder, externalId } from "../services/orders/orders-client.ts";

describe("payment orders over REST (create, read, list, validation, isolation)", () => {
  let api: ApiClient;
  let other: ApiClient;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant("Shop")).api;
    other = (await sys.createMerchant("Other shop")).api;
  });

  const create = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    api.post("/api/v1/payment-orders", { externalId: externalId(), externalCustomerId: "c-1", asset: "USDT_TRON", amount: "10", ...body }, headers);

  describe("create", () => {
    it("answers 201 with a fresh address, the exact amount at the asset's decimals, and the documented defaults", async () => {
      const before = Date.now();
      const res = await create({ amount: "12.5", metadata: { cart: "42" } });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({
        object: "payment_order",
        asset: "USDT_TRON",
        network: "TRON",
        amountToPay: "12.500000",
        amount: "12.5",
        currency: null,
        rate: null,
        rateAt: null,
        status: "PENDING",
        amountPaid: "0.000000",
        overpaidAmount: "0.000000",
        latePayment: false,
        amountPaidLate: "0.000000",
        underpaymentTolerancePercent: "0",
        requiredConfirmations: 19,
        paidAt: null,
        expiredAt: null,
        settledAt: null,
      });
      expect(res.body.address).to.match(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
      expect(res.body.payments).to.deep.equal([]);
      expect(res.body.metadata).to.deep.equal({ cart: "42" });
      // Default lifetime: 30 minutes on the service clock.
      const lifetime = Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt);
      expect(lifetime).to.equal(30 * 60_000);
      expect(Date.parse(res.body.createdAt)).to.be.at.least(before - 5_000);
    });

    it("gives each asset an address of its network's format, never reused across orders", async () => {
      const btc = (await create({ asset: "BTC", amount: "0.001" })).body;
      const eth = (await create({ asset: "ETH", amount: "0.5" })).body;
      const usdc = (await create({ asset: "USDC_ETH", amount: "3" })).body;
      expect(btc.address).to.match(/^bc1q[02-9ac-hj-np-z]{38}$/);
      expect(btc.amountToPay).to.equal("0.00100000");
      expect(eth.address).to.match(/^0x[0-9a-fA-F]{40}$/);
      expect(eth.amountToPay).to.equal("0.500000000000000000");
      expect(usdc.address).to.match(/^0x[0-9a-fA-F]{40}$/);
      // ETH and USDC_ETH share the Ethereum key but never an address.
      expect(usdc.address).to.not.equal(eth.address);
      const again = (await create({ asset: "ETH", amount: "0.5" })).body;
      expect(again.address).to.not.equal(eth.address);
    });

    it("converts a currency amount at the quoted rate, rounding up at the asset's decimals, and records rate and time", async () => {
      // Sandbox prices: BTC 60000 USD, ETH 3000 USD, EUR 1.08 USD.
      const btc = await create({ asset: "BTC", amount: "100", currency: "USD" });
      expect(btc.status).to.equal(201);
      expect(btc.body).to.include({ amount: "100", currency: "USD", amountToPay: "0.00166667", rate: "0.000016666666666667" });
      expect(Date.parse(btc.body.rateAt)).to.be.closeTo(Date.parse(btc.body.createdAt), 5_000);
      const eurUsdc = await create({ asset: "USDC_ETH", amount: "10", currency: "EUR" });
      expect(eurUsdc.body).to.include({ amountToPay: "10.800000", rate: "1.08" });
      const eth = await create({ asset: "ETH", amount: "1", currency: "USD" });
      // 1/3000 = 0.000333…: up at 18 decimals.
      expect(eth.body.amountToPay).to.equal("0.000333333333333334");
      const same = await create({ asset: "USDT_TRON", amount: "19.99", currency: "USD" });
      expect(same.body).to.include({ amountToPay: "19.990000", rate: "1" });
      // The smallest amount still costs at least one unit of the asset, never 0.
      const tiny = await create({ asset: "BTC", amount: "0.000000000000000001", currency: "USD" });
      expect(tiny.body.amountToPay).to.equal("0.00000001");
    });

    it("refuses an asset amount with more fraction digits than the asset has, naming the field", async () => {
      const res = await create({ asset: "USDT_TRON", amount: "1.1234567" });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.match(/^amount: USDT_TRON has 6 decimals/);
      expect((await create({ asset: "BTC", amount: "0.000000001" })).status).to.equal(400);
      expect((await create({ asset: "ETH", amount: "0.000000000000000001" })).status).to.equal(201);
    });

    const invalidBodies: [string, Record<string, unknown>, RegExp][] = [
      ["a missing externalId", { externalId: undefined }, /externalId: is required/],
      ["a missing externalCustomerId", { externalCustomerId: undefined }, /externalCustomerId: is required/],
      ["a missing asset", { asset: undefined }, /asset: is required/],
      ["a missing amount", { amount: undefined }, /amount: is required/],
      ["an unknown asset (naming the allowed values)", { asset: "DOGE" }, /asset: must be one of USDT_TRON, USDC_ETH, BTC, ETH/],
      ["an unknown currency", { currency: "JPY" }, /currency: must be one of USD, EUR/],
      ["a zero amount", { amount: "0" }, /amount: must be greater than 0/],
      ["a negative amount", { amount: "-1" }, /amount: must match the pattern/],
      ["an amount as a number", { amount: 10 }, /amount: must be string/],
      ["expiresInMinutes below 5", { expiresInMinutes: 4 }, /expiresInMinutes: must be >= 5/],
      ["expiresInMinutes above 1440", { expiresInMinutes: 1441 }, /expiresInMinutes: must be <= 1440/],
      ["a fractional expiresInMinutes", { expiresInMinutes: 5.5 }, /expiresInMinutes: must be a whole number/],
      ["a tolerance above 10 percent", { underpaymentTolerancePercent: "10.5" }, /underpaymentTolerancePercent: must match the pattern/],
      ["an externalId over 200 characters", { externalId: "x".repeat(201) }, /externalId: must NOT have more than 200 characters/],
      ["an externalId with a control character", { externalId: "a\nb" }, /externalId: must match the pattern/],
      ["an unknown field", { amountInCents: 1000 }, /amountInCents: is not a known field/],
      ["metadata that is not an object", { metadata: ["a"] }, /metadata: must be object/],
    ];
    for (const [what, body, message] of invalidBodies) {
      it(`answers 400 naming the field for ${what}`, async () => {
        const payload = Object.fromEntries(
          Object.entries({ externalId: externalId(), externalCustomerId: "c-1", asset: "USDT_TRON", amount: "10", ...body }).filter(([, v]) => v !== undefined),
        );
        const res = await api.post("/api/v1/payment-orders", payload);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.match(message);
      });
    }

    it("answers 400 naming metadata, never 500, for a NUL character in a metadata key or value (Postgres jsonb cannot store it)", async () => {
      for (const metadata of [{ note: "a\u0000b" }, { "a\u0000": "b" }, { deep: [{ x: "\u0000" }] }]) {
        const res = await create({ metadata });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.match(/^metadata[.:]/);
        expect(res.body.message).to.match(/NUL/);
      }
      // The escaped text "\\u0000" (a backslash, then u0000) is ordinary text and is kept as given.
      const ok = await create({ metadata: { note: "\\u0000" } });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.metadata).to.deep.equal({ note: "\\u0000" });
    });

    it("answers 400 naming metadata, never 500, for metadata nested thousands of levels deep", async () => {
      // Written as text: JSON.stringify itself overflows on thousands of levels (as the gateway did: a 500).
      const nested = (depth: number) => `${'{"n":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;
      const post = (metadata: string) =>
        api.request("POST", "/api/v1/payment-orders", {
          raw: `{"externalId":"${externalId()}","externalCustomerId":"c-1","asset":"USDT_TRON","amount":"10","metadata":${metadata}}`,
          headers: { "content-type": "application/json" },
        });
      for (const metadata of [nested(33), nested(5000), `{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`]) {
        const res = await post(metadata);
        expect(res.status, res.text.slice(0, 200)).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.match(/^metadata[.:].*(deep|nest)/);
      }
      const ok = await post(nested(10));
      expect(ok.status, ok.text).to.equal(201);
    });

    it("accepts the bounds themselves: 5 and 1440 minutes, tolerance 10", async () => {
      const five = await create({ expiresInMinutes: 5 });
      expect(Date.parse(five.body.expiresAt) - Date.parse(five.body.createdAt)).to.equal(5 * 60_000);
      const day = await create({ expiresInMinutes: 1440, underpaymentTolerancePercent: "10" });
      expect(Date.parse(day.body.expiresAt) - Date.parse(day.body.createdAt)).to.equal(1440 * 60_000);
      expect(day.body.underpaymentTolerancePercent).to.equal("10");
    });
  });

  describe("externalId retries", () => {
    it("returns the existing order (200) for the same externalId and the same request, in any key order or amount spelling", async () => {
      const id = externalId();
      const body = { externalId: id, externalCustomerId: "c-9", asset: "BTC", amount: "25.50", currency: "USD", metadata: { a: 1, b: 2 } };
      const first = await api.post("/api/v1/payment-orders", body);
      expect(first.status).to.equal(201);
      const retry = await api.post("/api/v1/payment-orders", {
        metadata: { b: 2, a: 1 },
        amount: "25.5",
        currency: "USD",
        asset: "BTC",
        externalCustomerId: "c-9",
        externalId: id,
      });
      expect(retry.status).to.equal(200);
      expect(retry.body).to.deep.equal(first.body);
      expect(Number((await sys.sql("select count(*) as n from payment_orders where external_id = ?", [id]))[0].n)).to.equal(1);
    });

    it("answers 409 PAYMENT_ORDER_ALREADY_EXISTS for the same externalId with a different request", async () => {
      const id = externalId();
      expect((await create({ externalId: id, amount: "10" })).status).to.equal(201);
      for (const change of [
        { amount: "11" },
        { asset: "BTC", amount: "10" },
        { externalCustomerId: "c-2" },
        { expiresInMinutes: 60 },
        { metadata: { x: 1 } },
      ]) {
        const res = await create({ externalId: id, ...change });
        expect(res.status, JSON.stringify(change)).to.equal(409);
        expect(res.body.error).to.equal("PAYMENT_ORDER_ALREADY_EXISTS");
        expect(res.body.message).to.match(/^externalId: /);
      }
    });

    it("lets two merchants use the same externalId independently", async () => {
      const id = externalId();
      const mine = await create({ externalId: id });
      const theirs = await other.post("/api/v1/payment-orders", { externalId: id, externalCustomerId: "c-1", asset: "USDT_TRON", amount: "99" });
      expect(mine.status).to.equal(201);
      expect(theirs.status).to.equal(201);
      expect(theirs.body.id).to.not.equal(mine.body.id);
    });

    it("creates one order under 20 concurrent creates with one externalId, and answers every retry with it", async () => {
      const id = externalId();
      const results = await Promise.all(Array.from({ length: 20 }, () => create({ externalId: id, amount: "7" })));
      expect(results.map((r) => r.status).sort()).to.deep.equal([...Array(19).fill(200), 201].sort());
      expect(new Set(results.map((r) => r.body.id)).size).to.equal(1);
    });

    it("honours Idempotency-Key: the same key replays the first response, a different body is refused", async () => {
      const key = `key-${externalId()}`;
      const body = { externalId: externalId(), externalCustomerId: "c-1", asset: "USDT_TRON", amount: "5" };
      const first = await api.post("/api/v1/payment-orders", body, { "Idempotency-Key": key });
      const replay = await api.post("/api/v1/payment-orders", body, { "Idempotency-Key": key });
      expect(first.status).to.equal(201);
      expect(replay.status).to.equal(201);
      expect(replay.headers.get("idempotent-replayed")).to.equal("true");
      expect(replay.body).to.deep.equal(first.body);
      const reused = await api.post("/api/v1/payment-orders", { ...body, amount: "6" }, { "Idempotency-Key": key });
      expect(reused.status).to.equal(409);
      expect(reused.body.error).to.equal("IDEMPOTENCY_KEY_REUSED");
    });
  });

  describe("read", () => {
    it("reads an order by id, by externalId (URL-encoded) and its small status body", async () => {
      const id = `INV/2026/${externalId()} #1`;
      const order = await createOrder(api, { externalId: id, asset: "BTC", amount: "0.5" });
      const byId = await api.get(`/api/v1/payment-orders/${order.id}`);
      expect(byId.status).to.equal(200);
      expect(byId.body).to.deep.equal(order);
      const byExternal = await api.get(`/api/v1/payment-orders/by-external-id/${encodeURIComponent(id)}`);
      expect(byExternal.status).to.equal(200);
      expect(byExternal.body).to.deep.equal(order);
      const status = await api.get(`/api/v1/payment-orders/${order.id}/status`);
      expect(status.status).to.equal(200);
      expect(status.body).to.deep.equal({
        id: order.id,
        externalId: id,
        status: "PENDING",
        amountToPay: "0.50000000",
        amountPaid: "0.00000000",
        expiresAt: order.expiresAt,
        updatedAt: order.updatedAt,
        version: 1,
      });
    });

    it("reads an order whose externalId is literally 'status' by external id", async () => {
      const id = `status`;
      const order = (await create({ externalId: id })).body;
      const res = await api.get(`/api/v1/payment-orders/by-external-id/${id}`);
      expect(res.status).to.equal(200);
      expect(res.body.id).to.equal(order.id);
    });

    it("answers 404 PAYMENT_ORDER_NOT_FOUND for unknown, malformed and other merchants' orders alike", async () => {
      const order = await createOrder(api);
      const paths = [
        `/api/v1/payment-orders/${order.id}`,
        `/api/v1/payment-orders/${order.id}/status`,
        `/api/v1/payment-orders/by-external-id/${encodeURIComponent(order.externalId)}`,
      ];
      for (const path of paths) {
        const res = await other.get(path);
        expect(res.status, path).to.equal(404);
        expect(res.body.error).to.equal("PAYMENT_ORDER_NOT_FOUND");
      }
      for (const path of [
        "/api/v1/payment-orders/00000000-0000-4000-8000-000000000000",
        "/api/v1/payment-orders/not-a-uuid/status",
        "/api/v1/payment-orders/by-external-id/nope",
      ]) {
        const res = await api.get(path);
        expect(res.status, path).to.equal(404);
        expect(res.body.error).to.equal("PAYMENT_ORDER_NOT_FOUND");
      }
    });

    it("answers 4xx, never 500, for an externalId no order can have (NUL and control characters, over 200 characters)", async () => {
      // A NUL cannot even be stored: 400 naming the field (or 404); never a database error.
      for (const path of ["/api/v1/payment-orders/by-external-id/a%00b", "/api/v1/payment-orders/by-external-id/%00"]) {
        const res = await api.get(path);
        expect(res.status, `${path}: ${res.text}`).to.be.oneOf([400, 404]);
        expect(res.body.error).to.be.oneOf(["INVALID_REQUEST", "PAYMENT_ORDER_NOT_FOUND"]);
      }
      for (const path of ["/api/v1/payment-orders/by-external-id/a%0Ab", `/api/v1/payment-orders/by-external-id/${"x".repeat(201)}`]) {
        const res = await api.get(path);
        expect(res.status, `${path}: ${res.text}`).to.equal(404);
        expect(res.body.error).to.equal("PAYMENT_ORDER_NOT_FOUND");
        expect(res.body.message.length).to.be.below(300);
      }
    });

    it("lists newest first with keyset pages and the status / externalCustomerId filters, own orders only", async () => {
      const customer = `cust-${externalId()}`;
      const created = [];
      for (let i = 0; i < 5; i++) created.push(await createOrder(api, { externalCustomerId: customer }));
      await createOrder(other, { externalCustomerId: customer });
      const first = await api.get(`/api/v1/payment-orders?externalCustomerId=${customer}&limit=3`);
      expect(first.status).to.equal(200);
      expect(first.body.hasMore).to.equal(true);
      const second = await api.get(`/api/v1/payment-orders?externalCustomerId=${customer}&limit=3&cursor=${first.body.nextCursor}`);
      expect(second.body.hasMore).to.equal(false);
      expect(second.body.nextCursor).to.equal(null);
      const ids = [...first.body.data, ...second.body.data].map((o: { id: string }) => o.id);
      expect(ids).to.deep.equal(created.map((o) => o.id).reverse());
      const pending = await api.get(`/api/v1/payment-orders?externalCustomerId=${customer}&status=PENDING`);
      expect(pending.body.data).to.have.length(5);
      const paid = await api.get(`/api/v1/payment-orders?externalCustomerId=${customer}&status=PAID`);
      expect(paid.body.data).to.have.length(0);
      const bad = await api.get("/api/v1/payment-orders?status=DONE");
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.match(/status: must be one of PENDING, UNDERPAID, CONFIRMING, PAID, EXPIRED/);
    });
  });
});
