import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext, type Interceptor, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { MerchantService, type GetMerchantRequest } from "../../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { createServicesServer } from "../../services/platform/rpc/server.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { attachServiceToken, requireServiceToken } from "../../services/platform/rpc/auth.ts";
import { errorInterceptor } from "../../services/platform/rpc/errors.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import { isTransportFailure } from "../../services/platform/rpc/transport-failure.ts";
import { DomainError } from "../../services/platform/errors.ts";
import { createLogger } from "../../services/platform/logger.ts";

/**
 * The short unary path (services/platform/rpc/connect-unary-server.ts on the services port, connect-unary-transport.ts
 * in RpcClients) against connect-node's own: every way of calling the same server must see the same outcome, and our
 * client must read connect-node's own handler alike. Real HTTP/2 servers on free ports; nothing mocked.
 */
const TOKEN = "unary-path-test-token-0123456789";
const logger = createLogger("silent");
const serverInterceptors = [requireServiceToken(TOKEN), errorInterceptor(logger)];

type Behaviour = (req: GetMerchantRequest, ctx: HandlerContext) => Promise<object>;
let behaviour: Behaviour = async () => ({});
const routes = (router: ConnectRouter) =>
  router.service(MerchantService, { getMerchant: ((req: GetMerchantRequest, ctx: HandlerContext) => behaviour(req, ctx)) as never });

interface Caller {
  name: string;
  transport(baseUrl: string, timeoutMs?: number): Transport;
}

const token: Interceptor[] = [attachServiceToken(TOKEN)];
const callers: Caller[] = [
  { name: "RpcClients (our short path)", transport: () => undefined as never },
  {
    name: "connect-node, Connect binary",
    transport: (baseUrl, timeoutMs) =>
      createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, interceptors: token, ...(timeoutMs && { defaultTimeoutMs: timeoutMs }) }),
  },
  {
    name: "connect-node, Connect JSON",
    transport: (baseUrl, timeoutMs) =>
      createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false, interceptors: token, ...(timeoutMs && { defaultTimeoutMs: timeoutMs }) }),
  },
  {
    name: "connect-node, gRPC",
    transport: (baseUrl, timeoutMs) => createGrpcTransport({ baseUrl, interceptors: token, ...(timeoutMs && { defaultTimeoutMs: timeoutMs }) }),
  },
];

/** connect-node's handler alone (no short path): what our client must read alike. */
async function libraryServer(): Promise<{ url: string; close(): void }> {
  const server = http2.createServer(connectNodeAdapter({ routes, interceptors: serverInterceptors }));
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

describe("RPC: the short unary path answers as connect-node does", () => {
  const servers: { name: string; url: string; close(): unknown }[] = [];
  const rpcs: RpcClients[] = [];

  before(async () => {
    const ours = createServicesServer(routes, serverInterceptors);
    const port = await ours.listen(0);
    servers.push({ name: "services port", url: `http://127.0.0.1:${port}`, close: () => ours.close() });
    servers.push({ name: "connect-node handler", ...(await libraryServer()) });
  });
  after(async () => {
    for (const r of rpcs) r.close();
    for (const s of servers) await s.close();
  });

  function clientFor(caller: Caller, baseUrl: string, timeoutMs?: number) {
    if (caller.name.startsWith("RpcClients")) {
      const rpc = new RpcClients(TOKEN, [], timeoutMs ? { timeoutMs } : {});
      rpcs.push(rpc);
      return rpc.client(MerchantService, baseUrl);
    }
    return createClient(MerchantService, caller.transport(baseUrl, timeoutMs));
  }

  /** Every caller against the services port, and our client against connect-node's handler. */
  function* pairs() {
    for (const caller of callers) yield { caller, server: servers[0]! };
    yield { caller: callers[0]!, server: servers[1]! };
  }

  it("a message, the handler's headers and trailers; the handler's signal aborted once the call is answered", async () => {
    let handlerSignal: AbortSignal | undefined;
    behaviour = async (req, ctx) => {
      handlerSignal = ctx.signal;
      ctx.responseHeader.set("x-seen-token", String(ctx.requestHeader.get("authorization")?.startsWith("Bearer ")));
      ctx.responseTrailer.set("x-trailer", "t1");
      return { merchant: { id: req.id, name: `Acme ${req.id}` } };
    };
    for (const { caller, server } of pairs()) {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      const res = await clientFor(caller, server.url).getMerchant({ id: "m1" }, { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
      const where = `${caller.name} → ${server.name}`;
      expect(res.merchant?.name, where).to.equal("Acme m1");
      expect(header?.get("x-seen-token"), where).to.equal("true");
      expect(trailer?.get("x-trailer"), where).to.equal("t1");
      expect(handlerSignal?.aborted, where).to.equal(true);
    }
  });

  it("a domain error: its code, message and domain code; an unexpected one: INTERNAL without its text", async () => {
    for (const { caller, server } of pairs()) {
      const where = `${caller.name} → ${server.name}`;
      behaviour = async () => {
        throw new DomainError("not_found", "MERCHANT_NOT_FOUND", "merchant m2 not found: ünïcode & 50%");
      };
      const err = (await clientFor(caller, server.url)
        .getMerchant({ id: "m2" })
        .catch((e: unknown) => e)) as ConnectError;
      expect(err, where).to.be.instanceOf(ConnectError);
      expect(err.code, where).to.equal(Code.NotFound);
      expect(err.rawMessage, where).to.equal("merchant m2 not found: ünïcode & 50%");
      expect(errorCodeOf(err), where).to.equal("MERCHANT_NOT_FOUND");

      behaviour = async () => {
        throw new Error('relation "merchants" does not exist');
      };
      const hidden = (await clientFor(caller, server.url)
        .getMerchant({ id: "m3" })
        .catch((e: unknown) => e)) as ConnectError;
      expect(hidden.code, where).to.equal(Code.Internal);
      expect(hidden.rawMessage, where).to.equal("internal error");
    }
  });

  it("a caller without the service token is UNAUTHENTICATED", async () => {
    behaviour = async () => ({ merchant: { id: "x", name: "should not be reached" } });
    for (const server of servers) {
      const intruder = new RpcClients("another-token-0123456789");
      rpcs.push(intruder);
      const err = (await intruder
        .client(MerchantService, server.url)
        .getMerchant({ id: "m4" })
        .catch((e: unknown) => e)) as ConnectError;
      expect(err.code, server.name).to.equal(Code.Unauthenticated);
    }
  });

  it("the deadline: DEADLINE_EXCEEDED for the caller, the handler told its remaining time and its signal aborted", async () => {
    for (const { caller, server } of pairs()) {
      const where = `${caller.name} → ${server.name}`;
      let remaining: number | undefined;
      const aborted = new Promise<unknown>((resolve) => {
        behaviour = async (_req, ctx) => {
          remaining = ctx.timeoutMs();
          ctx.signal.addEventListener("abort", () => resolve(ctx.signal.reason), { once: true });
          // Waits for nothing but its own cancellation.
          await new Promise<void>((done) => ctx.signal.addEventListener("abort", () => done(), { once: true }));
          return {};
        };
      });
      const err = (await clientFor(caller, server.url, 200)
        .getMerchant({ id: "m5" })
        .catch((e: unknown) => e)) as ConnectError;
      expect(err.code, where).to.equal(Code.DeadlineExceeded);
      const reason = await aborted;
      expect(reason, where).to.be.instanceOf(Error);
      expect(remaining, where).to.be.a("number").and.to.be.within(1, 200);
    }
  });

  it("bytes that are not the request message: INVALID_ARGUMENT naming the request, on the short path as on gRPC", async () => {
    const session = http2.connect(servers[0]!.url);
    try {
      const answer = await new Promise<{ status: number; contentType: string; body: string }>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/billing.merchants.v1.MerchantService/GetMerchant",
          "content-type": "application/proto",
          authorization: `Bearer ${TOKEN}`,
        });
        let status = 0;
        let contentType = "";
        let body = "";
        stream.on("response", (h) => {
          status = Number(h[":status"]);
          contentType = String(h["content-type"]);
        });
        stream.setEncoding("utf8");
        stream.on("data", (d: string) => (body += d));
        stream.on("end", () => resolve({ status, contentType, body }));
        stream.on("error", reject);
        // Field 1 (id) as a length-delimited string whose length runs past the end.
        stream.end(Buffer.from([0x0a, 0x20, 0x61]));
      });
      expect(answer.status).to.equal(400);
      expect(answer.contentType).to.equal("application/json");
      const error = JSON.parse(answer.body) as { code: string; message: string };
      expect(error.code).to.equal("invalid_argument");
      expect(error.message).to.match(/^request: is not a valid message \(/);
    } finally {
      session.close();
    }
  });

  it("a call whose signal is already aborted is CANCELED, and the call it started leaves no unhandled rejection", async () => {
    behaviour = async (req) => ({ merchant: { id: req.id, name: "Acme" } });
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      const client = clientFor(callers[0]!, servers[0]!.url, 5_000);
      const err = (await client.getMerchant({ id: "m7" }, { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as ConnectError;
      expect(err.code).to.equal(Code.Canceled);
      // A call after it on the same session is answered after the cancelled one settled; then one more turn.
      expect((await client.getMerchant({ id: "m8" })).merchant?.name).to.equal("Acme");
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off("unhandledRejection", record);
    }
  });

  it("an answer HTTP/2 cannot carry resets the stream: the caller reads a transport failure at once, the server keeps serving", async () => {
    behaviour = async (req, ctx) => {
      if (req.id === "bad") ctx.responseHeader.set("te", "gzip");
      return { merchant: { id: req.id, name: "Acme" } };
    };
    const client = clientFor(callers[0]!, servers[0]!.url, 10_000);
    const started = Date.now();
    const err = (await client.getMerchant({ id: "bad" }).catch((e: unknown) => e)) as ConnectError;
    expect(err).to.be.instanceOf(ConnectError);
    expect(isTransportFailure(err), err.message).to.equal(true);
    expect(Date.now() - started).to.be.below(5_000);
    expect((await client.getMerchant({ id: "good" })).merchant?.name).to.equal("Acme");
  });
});
