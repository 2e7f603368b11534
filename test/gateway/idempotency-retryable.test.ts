import { expect } from "chai";
import http2 from "node:http2";
import type net from "node:net";
import pg from "pg";
import { RefundsService } from "../../proto/gen/billing/subscriptions/v1/refunds_pb.ts";
import { SERVICE_NAMES } from "../../services/platform/config.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { startTestSystem, type TestSystem, useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { approvedSubscription } from "../support/billing.ts";

/** How a services process can break a call: what a kill, a crash or a restart looks like to the gateway. */
type Breakage = "socket reset" | "socket closed" | "stream reset" | "GOAWAY" | "connection refused";

/**
 * A real HTTP/2 (h2c) server standing in for the subscriptions service that
 * breaks every call it receives in the chosen way, and counts the calls
 * that reached it (so a test sees whether a retry really ran again).
 */
async function breakingServer() {
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createServer();
  const state = { breakage: "socket reset" as Breakage, calls: 0 };
  server.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => {});
    session.on("close", () => sessions.delete(session));
  });
  server.on("stream", (stream) => {
    state.calls += 1;
    stream.on("error", () => {});
    const session = stream.session!;
    switch (state.breakage) {
      case "socket reset":
        // A process killed mid-answer: the client reads "read ECONNRESET".
        stream.respond({ ":status": 200, "content-type": "application/proto" });
        (session.socket as net.Socket).resetAndDestroy();
        break;
      case "socket closed":
        session.socket.destroy();
        break;
      case "stream reset":
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        break;
      case "GOAWAY":
        session.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR);
        session.destroy();
        break;
      default:
        throw new Error(`no call should arrive while ${state.breakage}`);
    }
  });
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)));
  return {
    state,
    url: `http://127.0.0.1:${port}`,
    /** Nothing listens any more: the next connection is refused. */
    stopListening() {
      server.close();
      for (const s of sessions) s.destroy();
    },
    close() {
      server.close();
      for (const s of sessions) s.destroy();
    },
  };
}

describe("Idempotency-Key: an answer that says 'try again' is never the key's stored answer", () => {
  describe("a services process whose connection breaks mid-call (real HTTP/2 server)", () => {
    let broken: Awaited<ReturnType<typeof breakingServer>>;
    let sys: TestSystem;
    let api: ApiClient;
    const body = {
      externalReference: "transport-broken",
      planId: "00000000-0000-4000-8000-000000000000",
      walletUserId: "00000000-0000-4000-8000-000000000001",
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    };

    before(async () => {
      broken = await breakingServer();
      // Every service in this process except subscriptions, which the gateway calls over the network at the breaking server.
      sys = await startTestSystem({
        services: SERVICE_NAMES.filter((s) => s !== "subscriptions"),
        workerGroups: [],
        env: { SUBSCRIPTIONS_SERVICE_URL: broken.url },
      });
      api = (await sys.createMerchant()).api;
    });
    after(async () => {
      await sys?.close();
      broken?.close();
    });

    const breakages: Breakage[] = ["socket reset", "socket closed", "stream reset", "GOAWAY"];
    for (const breakage of breakages) {
      it(`${breakage}: 503 SERVICE_UNAVAILABLE with a generic message, and a retry with the same key runs again`, async () => {
        broken.state.breakage = breakage;
        const callsBefore = broken.state.calls;
        const key = { "idempotency-key": `broken-${breakage}` };
        const first = await api.post("/api/v1/subscriptions", body, key);
        expect(first.status, first.text).to.equal(503);
        expect(first.body).to.deep.equal({ error: "SERVICE_UNAVAILABLE", message: "a service is temporarily unavailable; retry later" });
        const retry = await api.post("/api/v1/subscriptions", body, key);
        expect(retry.status, retry.text).to.equal(503);
        expect(retry.headers.get("idempotent-replayed")).to.equal(null);
        expect(broken.state.calls - callsBefore, "calls that reached the service").to.equal(2);
      });
    }

    it("connection refused: 503, never stored", async () => {
      broken.stopListening();
      broken.state.breakage = "connection refused";
      const key = { "idempotency-key": "broken-refused" };
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await api.post("/api/v1/subscriptions", body, key);
        expect(res.status, res.text).to.equal(503);
        expect(res.body.error).to.equal("SERVICE_UNAVAILABLE");
        expect(res.headers.get("idempotent-replayed")).to.equal(null);
      }
    });
  });

  describe("409 REFUND_IN_PROGRESS (another attempt still with the wallet)", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    let internal: RpcClients;

    // No workers: the sweep must not finish the held refund behind the test's back.
    const sys = useTestSystem({ workerGroups: [] });
    before(async () => {
      rpc = subscriptionsRpc(sys);
      internal = new RpcClients(sys.config.internalApiToken);
    });
    after(async () => {
      rpc?.close();
      internal?.close();
    });

    it("is answered while the first attempt runs, and the same key afterwards gets the finished refund, not the 409 again", async () => {
      const merchant = await sys.createMerchant();
      const { subscriptionId, user } = await approvedSubscription(sys, merchant.api, rpc.client, { credits: { USDT_TRON: "100" } });
      const charge = (await merchant.api.get(`/api/v1/subscriptions/${subscriptionId}/charges`)).body.data[0];
      const key = "refund-while-busy";

      // Hold the customer's ledger accounts: the wallet's refund (which locks them) waits, so the first attempt stays PENDING.
      const holder = new pg.Client({ connectionString: sys.database.url });
      await holder.connect();
      let first: Promise<unknown> | undefined;
      try {
        await holder.query("begin");
        await holder.query("select id from ledger_accounts where owner_id = $1 for update", [user.id]);
        // The first attempt, straight to the service (as if through another gateway whose key Redis then lost).
        const refunds = internal.client(RefundsService, `http://127.0.0.1:${sys.system.servicesPort}`);
        first = refunds.createRefund({ merchantId: merchant.id, chargeId: charge.id, metadataJson: "{}", idempotencyKey: key });
        first.catch(() => {});
        await eventually(
          async () => ((await sys.sql("select status from subscription_refunds where idempotency_key = ?", [key]))[0]?.status === "PENDING" ? true : undefined),
          10_000,
          "the first attempt's PENDING refund",
        );
        const busy = await merchant.api.post("/api/v1/refunds", { chargeId: charge.id }, { "idempotency-key": key });
        expect(busy.status, busy.text).to.equal(409);
        expect(busy.body.error).to.equal("REFUND_IN_PROGRESS");
      } finally {
        await holder.query("rollback").catch(() => {});
        await holder.end();
      }
      const finished = (await first) as { refund: { id: string } };

      const retry = await merchant.api.post("/api/v1/refunds", { chargeId: charge.id }, { "idempotency-key": key });
      expect(retry.status, retry.text).to.equal(201);
      expect(retry.headers.get("idempotent-replayed")).to.equal(null);
      expect(retry.body).to.include({ id: finished.refund.id, status: "SUCCEEDED" });
      // A final answer is the key's from now on.
      const replay = await merchant.api.post("/api/v1/refunds", { chargeId: charge.id }, { "idempotency-key": key });
      expect(replay.status).to.equal(201);
      expect(replay.headers.get("idempotent-replayed")).to.equal("true");
    });
  });
});
