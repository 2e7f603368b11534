import { expect } from "chai";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";

const run = promisify(execFile);
const email = () => `op-${randomUUID().slice(0, 12)}@example.com`;
const USER_FIELDS = ["createdAt", "email", "id", "pinLocked", "pinLockedUntil", "status"];

describe("operator wallet API over REST", () => {
  let admin: ApiClient;

  const sys = useTestSystem({ services: ["wallet"], workerGroups: [] });
  before(async () => {
    admin = sys.admin;
  });

  const createUser = async () => {
    const res = await admin.post("/admin/v1/wallet-users", { email: email(), password: "password-123", pin: "123456" });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; email: string };
  };

  describe("POST /admin/v1/wallet-users", () => {
    it("creates a user: 201 with the user and never the password or PIN", async () => {
      const address = email().replace("op-", "Op-");
      const res = await admin.post("/admin/v1/wallet-users", { email: address, password: "password-123", pin: "123456" });
      expect(res.status).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(USER_FIELDS);
      expect(res.body).to.include({ email: address.toLowerCase(), status: "ACTIVE", pinLocked: false, pinLockedUntil: null });
      expect(res.body.id).to.match(/^[0-9a-f-]{36}$/);
      expect(res.text).not.to.include("password-123");
      expect(res.text).not.to.include("123456");
    });

    it("answers 409 WALLET_USER_ALREADY_EXISTS for the same email in another case", async () => {
      const user = await createUser();
      const res = await admin.post("/admin/v1/wallet-users", { email: user.email.toUpperCase(), password: "password-456", pin: "654321" });
      expect(res.status).to.equal(409);
      expect(res.body.error).to.equal("WALLET_USER_ALREADY_EXISTS");
      expect(res.body.message).to.be.a("string");
    });

    it("answers 400 naming each bad field", async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ password: "password-123", pin: "123456" }, "email"],
        [{ email: "nope", password: "password-123", pin: "123456" }, "email"],
        [{ email: email(), password: "", pin: "123456" }, "password"],
        [{ email: email(), password: "p".repeat(201), pin: "123456" }, "password"],
        [{ email: email(), password: "password-123", pin: "12345" }, "pin"],
        [{ email: email(), password: "password-123", pin: 123456 }, "pin"],
        [{ email: email(), password: "password-123", pin: "123456", role: "admin" }, "role"],
      ];
      for (const [body, field] of cases) {
        const res = await admin.post("/admin/v1/wallet-users", body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.include(`${field}:`);
        expect(res.body.details.map((d: { field: string }) => d.field)).to.include(field);
      }
    });

    it("answers 401 without the admin key", async () => {
      const res = await sys.http.post("/admin/v1/wallet-users", { email: email(), password: "password-123", pin: "123456" });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal("INVALID_ADMIN_KEY");
    });
  });

  describe("credits, balances and the ledger check", () => {
    it("credits a user: 201 with the new balance; GET shows the user with a balance per asset", async () => {
      const user = await createUser();
      const first = await admin.post(`/admin/v1/wallet-users/${user.id}/credits`, { asset: "USDT_TRON", amount: "100.50" });
      expect(first.status).to.equal(201);
      expect(Object.keys(first.body).sort()).to.deep.equal(["asset", "balance", "transactionId", "walletUserId"]);
      expect(first.body).to.include({ walletUserId: user.id, asset: "USDT_TRON", balance: "100.5" });
      const second = await admin.post(`/admin/v1/wallet-users/${user.id}/credits`, { asset: "USDT_TRON", amount: "0.000001" });
      expect(second.body.balance).to.equal("100.500001");

      const got = await admin.get(`/admin/v1/wallet-users/${user.id}`);
      expect(got.status).to.equal(200);
      expect(Object.keys(got.body).sort()).to.deep.equal([...USER_FIELDS, "balances"].sort());
      expect(got.body.balances).to.deep.equal([
        { asset: "USDT_TRON", balance: "100.500001", frozen: false },
        { asset: "USDC_ETH", balance: "0", frozen: false },
        { asset: "BTC", balance: "0", frozen: false },
        { asset: "ETH", balance: "0", frozen: false },
      ]);
    });

    it("credits once per Idempotency-Key", async () => {
      const user = await createUser();
      const headers = { "idempotency-key": `topup-${randomUUID()}` };
      const first = await admin.post(`/admin/v1/wallet-users/${user.id}/credits`, { asset: "BTC", amount: "0.5" }, headers);
      const again = await admin.post(`/admin/v1/wallet-users/${user.id}/credits`, { asset: "BTC", amount: "0.5" }, headers);
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect((await admin.get(`/admin/v1/wallet-users/${user.id}`)).body.balances[2]).to.deep.equal({ asset: "BTC", balance: "0.5", frozen: false });
    });

    it("answers 400 naming the field for an amount finer than the asset, zero or an unknown asset", async () => {
      const user = await createUser();
      const cases: [Record<string, unknown>, string][] = [
        [{ asset: "BTC", amount: "0.000000001" }, "amount: BTC has 8 decimals"],
        [{ asset: "BTC", amount: "0" }, "amount: must be greater than 0"],
        [{ asset: "BTC", amount: "-1" }, "amount:"],
        [{ asset: "BTC", amount: 1 }, "amount:"],
        [{ asset: "DOGE", amount: "1" }, "asset:"],
        [{ amount: "1" }, "asset:"],
      ];
      for (const [body, message] of cases) {
        const res = await admin.post(`/admin/v1/wallet-users/${user.id}/credits`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.include(message);
      }
    });

    it("answers 404 WALLET_USER_NOT_FOUND for an unknown user", async () => {
      for (const res of [
        await admin.get(`/admin/v1/wallet-users/${randomUUID()}`),
        await admin.get("/admin/v1/wallet-users/not-a-uuid"),
        await admin.post(`/admin/v1/wallet-users/${randomUUID()}/credits`, { asset: "BTC", amount: "1" }),
        await admin.post(`/admin/v1/wallet-users/${randomUUID()}/freeze`),
      ]) {
        expect(res.status).to.equal(404);
        expect(res.body).to.have.keys("error", "message");
        expect(res.body.error).to.equal("WALLET_USER_NOT_FOUND");
      }
    });

    it("freezes and unfreezes users and accounts (an illegal move is 409)", async () => {
      const user = await createUser();
      const frozen = await admin.post(`/admin/v1/wallet-users/${user.id}/freeze`);
      expect(frozen.status).to.equal(200);
      expect(frozen.body.status).to.equal("FROZEN");
      const twice = await admin.post(`/admin/v1/wallet-users/${user.id}/freeze`);
      expect(twice.status).to.equal(409);
      expect(twice.body.error).to.equal("INVALID_STATUS_TRANSITION");
      expect((await admin.post(`/admin/v1/wallet-users/${user.id}/unfreeze`)).body.status).to.equal("ACTIVE");

      const account = await admin.post(`/admin/v1/wallet-users/${user.id}/accounts/freeze`, { asset: "ETH" });
      expect(account.status).to.equal(200);
      expect(account.body).to.deep.equal({ asset: "ETH", balance: "0", frozen: true });
      expect((await admin.post(`/admin/v1/wallet-users/${user.id}/accounts/unfreeze`, { asset: "ETH" })).body.frozen).to.equal(false);
    });

    it("GET /admin/v1/ledger/check reports a clean ledger", async () => {
      await createUser().then((u) => admin.post(`/admin/v1/wallet-users/${u.id}/credits`, { asset: "ETH", amount: "1.000000000000000001" }));
      const res = await admin.get("/admin/v1/ledger/check");
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body).sort()).to.deep.equal(["accountsChecked", "ok", "problems", "transactionsChecked"]);
      expect(res.body.ok).to.equal(true);
      expect(res.body.problems).to.deep.equal([]);
      expect(res.body.transactionsChecked).to.be.greaterThan(0);
      expect(res.body.accountsChecked).to.be.greaterThan(1);
    });

    it("GET /admin/v1/assets lists the registry", async () => {
      const res = await admin.get("/admin/v1/assets");
      expect(res.status).to.equal(200);
      expect(res.body.data.map((a: { code: string }) => a.code)).to.deep.equal(["USDT_TRON", "USDC_ETH", "BTC", "ETH"]);
      expect(res.body.data[2]).to.deep.equal({
        code: "BTC",
        network: "BITCOIN",
        decimals: 8,
        currency: "BTC",
        name: "Bitcoin",
        requiredConfirmations: 2,
        payoutFee: "0.00002",
        payoutMinimum: "0.0001",
      });
    });

    it("documents the operator wallet paths in the OpenAPI document", async () => {
      const doc = (await sys.http.get("/api/v1/openapi.json")).body;
      for (const path of [
        "/admin/v1/wallet-users",
        "/admin/v1/wallet-users/{id}",
        "/admin/v1/wallet-users/{id}/credits",
        "/admin/v1/ledger/check",
        "/admin/v1/assets",
      ]) {
        expect(doc.paths, path).to.have.property(path);
      }
    });
  });

  describe("the billing CLI", () => {
    const cli = (...args: string[]) =>
      run(process.execPath, ["cli/billing.ts", ...args, "--json"], {
        env: { ...process.env, DATABASE_URL: sys.database.url, LOG_LEVEL: "silent", SANDBOX: "true" },
      });

    it("creates, credits and reads a wallet user and checks the ledger, as JSON", async () => {
      const address = email();
      const created = JSON.parse((await cli("wallet-users", "create", "--email", address, "--password", "password-123", "--pin", "123456")).stdout);
      expect(created).to.include({ email: address, status: "ACTIVE" });
      expect(JSON.stringify(created)).not.to.include("password-123");

      const credited = JSON.parse((await cli("wallet-users", "credit", "--id", created.id, "--asset", "USDC_ETH", "--amount", "12.34")).stdout);
      expect(credited).to.include({ walletUserId: created.id, asset: "USDC_ETH", balance: "12.34" });

      const got = JSON.parse((await cli("wallet-users", "get", "--id", created.id)).stdout);
      expect(got.balances[1]).to.deep.equal({ asset: "USDC_ETH", balance: "12.34", frozen: false });
      // The same user is visible through the REST API: one database.
      expect((await admin.get(`/admin/v1/wallet-users/${created.id}`)).body.balances[1].balance).to.equal("12.34");

      const check = JSON.parse((await cli("ledger", "check")).stdout);
      expect(check).to.include({ ok: true });

      const failure = await cli("wallet-users", "create", "--email", address, "--password", "password-123", "--pin", "123456").catch((e) => e);
      expect(failure.code).to.equal(1);
      expect(failure.stderr).to.include("already exists");
    });
  });
});
