import { expect } from "chai";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Interceptor } from "@connectrpc/connect";
import { createGatewayApp } from "../../gateway/app.ts";
import { ApiKeyCache, listenForRevocations } from "../../gateway/api-key-cache.ts";
import { gatewayClients } from "../../gateway/start-gateway.ts";
import { balanceRoutes } from "../../gateway/routes/balance.ts";
import { hashApiKey } from "../../services/merchants/contract.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import { apiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";

/** The production cache, telling the test which revocations it has heard. */
class ObservedCache extends ApiKeyCache {
  readonly heard: string[] = [];
  override forget(keyHash: string): void {
    super.forget(keyHash);
    this.heard.push(keyHash);
  }
}

/**
 * A lookup that started before a revocation and ended after it used to put
 * the revoked key in the cache for up to 60 s. Here a gateway's call to the
 * real merchants service is held after the service answered "valid" (a client
 * interceptor on the gateway's own RPC clients) while the key is revoked and
 * the revocation is heard; only then does the lookup finish.
 */
describe("API-key cache: a revocation wins over a lookup in flight", () => {
  let sys: TestSystem;
  let rpc: RpcClients;
  let server: Server;
  let revocations: ReturnType<typeof listenForRevocations>;
  const cache = new ObservedCache();
  let held: { answered: () => void; release: Promise<void> } | undefined;

  before(async () => {
    sys = await startTestSystem({ workerGroups: [] });
    const holdLookups: Interceptor = (next) => async (req) => {
      const res = await next(req);
      const gate = held;
      if (gate && req.method.name === "AuthenticateApiKey") {
        gate.answered();
        await gate.release;
      }
      return res;
    };
    rpc = new RpcClients(sys.config.internalApiToken, [holdLookups]);
    const logger = createLogger("silent");
    revocations = listenForRevocations(cache, sys.config, sys.config.queuePrefix, logger);
    await eventually(async () => (revocations.isLive() ? true : undefined), 10_000, "the revocation subscription");
    const deps = { config: sys.config, logger, clients: gatewayClients(rpc, sys.config), readiness: async () => ({}) };
    const app = createGatewayApp(deps, { idempotencyStore: undefined as never, routes: balanceRoutes, apiKeyCache: { cache, isLive: revocations.isLive } });
    server = await new Promise((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
  });
  after(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    revocations?.close();
    rpc?.close();
    await sys?.close();
  });

  it("the lookup that was in flight does not cache the key: the next request with it is 401", async () => {
    const merchant = await sys.createMerchant();
    const gateway = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { "x-api-key": merchant.apiKey });

    let answered!: () => void;
    const lookupAnswered = new Promise<void>((resolve) => (answered = resolve));
    let release!: () => void;
    held = { answered, release: new Promise<void>((resolve) => (release = resolve)) };
    const inFlight = gateway.get("/api/v1/balance");
    await lookupAnswered; // the merchants service said "valid"; the gateway has not seen the answer yet

    const revoked = await sys.admin.delete(`/admin/v1/merchants/${merchant.id}/api-keys/${merchant.apiKeyId}`);
    expect(revoked.status, revoked.text).to.be.oneOf([200, 204]);
    await eventually(async () => (cache.heard.includes(hashApiKey(merchant.apiKey)) ? true : undefined), 10_000, "the revocation announcement");

    held = undefined;
    release();
    // Authenticated before the revocation: this one request may finish.
    expect((await inFlight).status).to.equal(200);

    const after = await gateway.get("/api/v1/balance");
    expect(after.status, after.text).to.equal(401);
    expect(after.body.error).to.equal("INVALID_API_KEY");
  });

  it("a lookup with no revocation meanwhile is cached as before", async () => {
    const merchant = await sys.createMerchant();
    const gateway = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { "x-api-key": merchant.apiKey });
    expect((await gateway.get("/api/v1/balance")).status).to.equal(200);
    expect(cache.get(hashApiKey(merchant.apiKey))).to.equal(merchant.id);
  });
});
