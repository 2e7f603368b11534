import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { signerChain } from "../../../services/payouts/signer-chain.ts";
import { systemClock } from "../../../services/platform/clock.ts";
import type { UseCaseContext } from "../../../services/platform/use-case.ts";

/** The custody-signer client against a small local signer that keeps transfers by payout id (the interface in the README). */
describe("payout signer client (HTTP interface, local signer)", () => {
  let server: http.Server;
  let url: string;
  const transfers = new Map<string, { body: any; status: string; txHash: string }>();
  const seen: { method: string; path: string; key?: string; auth?: string }[] = [];
  let mode: "ok" | "slow" | "error" = "ok";

  before(async () => {
    server = http.createServer(async (req, res) => {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      seen.push({ method: req.method!, path: req.url!, key: req.headers["idempotency-key"] as string | undefined, auth: req.headers.authorization });
      if (mode === "slow") return void setTimeout(() => res.end("{}"), 500);
      if (mode === "error") return void res.writeHead(502).end("bad gateway");
      const answer = (code: number, t: { body: any; status: string; txHash: string }) =>
        res
          .writeHead(code, { "content-type": "application/json" })
          .end(JSON.stringify({ payoutId: t.body.payoutId, status: t.status, txHash: t.txHash, confirmations: 0, failureReason: null }));
      if (req.method === "POST" && req.url === "/v1/payouts") {
        const body = JSON.parse(raw);
        const existing = transfers.get(body.payoutId);
        if (existing) return answer(200, existing);
        const t = { body, status: "SUBMITTED", txHash: `0x${"ab".repeat(32)}` };
        transfers.set(body.payoutId, t);
        return answer(201, t);
      }
      const id = decodeURIComponent(req.url!.replace("/v1/payouts/", ""));
      const t = transfers.get(id);
      if (!t) return void res.writeHead(404).end();
      return answer(200, t);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const ctx = { clock: systemClock } as unknown as UseCaseContext;
  const transfer = {
    payoutId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    network: "ETHEREUM",
    asset: "ETH",
    address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    amount: "0.5",
    requiredConfirmations: 12,
    blockSeconds: 12,
  };

  it("submits with the payout id as Idempotency-Key and the bearer token; a retry answers the same transfer, signing nothing new", async () => {
    const chain = signerChain({ url, token: "signer-token-0123456789" });
    const first = await chain.submit(ctx, transfer);
    const second = await chain.submit(ctx, transfer);
    expect(first).to.deep.equal({ state: "SUBMITTED", txHash: `0x${"ab".repeat(32)}`, confirmations: 0, failureReason: null });
    expect(second).to.deep.equal(first);
    expect(transfers.size).to.equal(1);
    expect(seen.filter((s) => s.method === "POST").every((s) => s.key === transfer.payoutId && s.auth === "Bearer signer-token-0123456789")).to.equal(true);
    expect(transfers.get(transfer.payoutId)!.body).to.deep.include({ network: "ETHEREUM", asset: "ETH", amount: "0.5", requiredConfirmations: 12 });
  });

  it("reads a transfer's state, and undefined for one the signer never heard of", async () => {
    const chain = signerChain({ url });
    transfers.get(transfer.payoutId)!.status = "CONFIRMED";
    expect((await chain.status(ctx, transfer))?.state).to.equal("CONFIRMED");
    expect(await chain.status(ctx, { ...transfer, payoutId: "00000000-0000-4000-8000-000000000000" })).to.equal(undefined);
  });

  it("throws on a timeout and on a 5xx (the wallet-call protocol counts it and retries the same id)", async () => {
    mode = "slow";
    const started = performance.now();
    await signerChain({ url, timeoutMs: 100 })
      .submit(ctx, transfer)
      .then(
        () => expect.fail("answered"),
        (err) => expect(String(err)).to.match(/abort|timeout/i),
      );
    expect(performance.now() - started).to.be.below(450);
    mode = "error";
    await signerChain({ url })
      .submit(ctx, transfer)
      .then(
        () => expect.fail("answered"),
        (err) => expect(String(err)).to.contain("502"),
      );
    mode = "ok";
  });
});
