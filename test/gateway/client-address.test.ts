import { expect } from "chai";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { Router } from "@koa/router";
import { Redis } from "ioredis";
import { createGatewayApp } from "../../gateway/app.ts";
import type { GatewayDeps } from "../../gateway/deps.ts";
import type { GatewayState } from "../../gateway/route.ts";
import { loadConfig } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { PAGE_LOGIN_MAX_FAILURES, PAGE_LOGIN_WINDOW_MS, redisLoginLimiter } from "../../gateway/pages/login-limiter.ts";
import { infrastructure } from "../support/infrastructure.ts";

/** The gateway app as built for production, with one extra route that shows what it decided the client is. */
async function gatewayWith(trustProxy: string | undefined) {
  const config = loadConfig({ ...(trustProxy !== undefined && { TRUST_PROXY: trustProxy }), LOG_LEVEL: "silent" });
  const deps: GatewayDeps = { config, logger: createLogger("silent"), clients: {} as GatewayDeps["clients"], readiness: async () => ({}) };
  const echo = new Router<GatewayState>();
  echo.get("/whoami", (ctx) => {
    ctx.body = { ip: ctx.ip, protocol: ctx.protocol, host: ctx.host };
  });
  const app = createGatewayApp(deps, { idempotencyStore: undefined as never, routes: [], extraRouters: [echo] });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    async whoami(headers: Record<string, string> = {}) {
      return (await (await fetch(`${base}/whoami`, { headers })).json()) as { ip: string; protocol: string; host: string };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const SPOOFED = { "x-forwarded-for": "198.51.100.7, 203.0.113.9", "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" };
const isLoopback = (ip: string) => ["127.0.0.1", "::ffff:127.0.0.1", "::1"].includes(ip);

describe("client address and TRUST_PROXY", () => {
  it("by default ignores X-Forwarded-* entirely: a client cannot pick its own address", async () => {
    const gw = await gatewayWith(undefined);
    try {
      const seen = await gw.whoami(SPOOFED);
      expect(isLoopback(seen.ip), seen.ip).to.equal(true);
      expect(seen.protocol).to.equal("http");
      expect(seen.host).not.to.equal("evil.example");
      // Every spoofed address is the same client for the limiter.
      expect((await gw.whoami({ "x-forwarded-for": "192.0.2.1" })).ip).to.equal(seen.ip);
    } finally {
      await gw.close();
    }
  });

  it("with a hop count trusts exactly that many proxies", async () => {
    const one = await gatewayWith("1");
    const two = await gatewayWith("2");
    try {
      expect(await one.whoami(SPOOFED)).to.include({ ip: "203.0.113.9", protocol: "https" });
      expect((await two.whoami(SPOOFED)).ip).to.equal("198.51.100.7");
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("with a list trusts only those proxies: forwarded headers from any other peer are dropped", async () => {
    const trusted = await gatewayWith("10.0.0.0/8, 127.0.0.1, ::1, ::ffff:127.0.0.1");
    const untrusted = await gatewayWith("10.0.0.0/8");
    try {
      expect(await trusted.whoami(SPOOFED)).to.include({ ip: "203.0.113.9", protocol: "https" });
      // The next hop (203.0.113.9) is not a listed proxy: the address stops there even with more entries.
      expect((await trusted.whoami({ "x-forwarded-for": "198.51.100.7, 203.0.113.9, 10.1.2.3" })).ip).to.equal("203.0.113.9");
      const seen = await untrusted.whoami(SPOOFED);
      expect(isLoopback(seen.ip), seen.ip).to.equal(true);
      expect(seen.protocol).to.equal("http");
    } finally {
      await trusted.close();
      await untrusted.close();
    }
  });

  it("refuses TRUST_PROXY values that would trust everyone or make no sense", () => {
    for (const bad of ["true", "yes", "300.1.1.1/99x", "1.2.3"]) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).to.throw(/TRUST_PROXY/);
    }
    expect(loadConfig({}).trustProxy).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: "loopback,10.0.0.0/8" }).trustProxy).to.deep.equal(["loopback", "10.0.0.0/8"]);
  });

  it("binds the services port to 127.0.0.1 and limits merchants to 200 / 100 per second unless configured", () => {
    expect(loadConfig({})).to.include({ servicesHost: "127.0.0.1", rateLimitBurst: 200, rateLimitPerSecond: 100 });
    expect(loadConfig({ SERVICES_HOST: "0.0.0.0", RATE_LIMIT_BURST: "50", RATE_LIMIT_PER_SECOND: "5" })).to.include({
      servicesHost: "0.0.0.0",
      rateLimitBurst: 50,
      rateLimitPerSecond: 5,
    });
    expect(() => loadConfig({ RATE_LIMIT_BURST: "0" })).to.throw(/RATE_LIMIT_BURST/);
    expect(() => loadConfig({ RATE_LIMIT_PER_SECOND: "100001" })).to.throw(/RATE_LIMIT_PER_SECOND/);
    expect(() => loadConfig({ NODE_ENV: "production", SECRETS_KEY: "ZGV2LXNlY3JldHMta2V5LWNoYW5nZS1tZS0zMmJ5dGU=", SANDBOX: "true" })).to.throw(
      /INTERNAL_API_TOKEN/,
    );
  });
});

describe("hosted-page login limiter (per client address, Redis)", () => {
  let redis: Redis;
  before(async () => {
    redis = new Redis((await infrastructure()).redisUrl, { maxRetriesPerRequest: 1 });
    await redis.ping();
  });
  after(() => redis?.disconnect());

  it("counts failures with their expiry set in the same step and blocks at the limit", async () => {
    const prefix = `t${randomBytes(5).toString("hex")}`;
    const limiter = redisLoginLimiter(redis, prefix, createLogger("silent"));
    await limiter.failed("203.0.113.9");
    // The very first failure already carries the window's expiry (no separate EXPIRE that could be lost).
    const keys = await redis.keys(`${prefix}:page-login-failures*`);
    expect(keys).to.have.length(1);
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).to.be.greaterThan(0).and.at.most(PAGE_LOGIN_WINDOW_MS);
    await Promise.all(Array.from({ length: PAGE_LOGIN_MAX_FAILURES - 2 }, () => limiter.failed("203.0.113.9")));
    expect(await limiter.blocked("203.0.113.9")).to.equal(false);
    await limiter.failed("203.0.113.9");
    expect(await limiter.blocked("203.0.113.9")).to.equal(true);
    expect(await limiter.blocked("198.51.100.7")).to.equal(false);
    await redis.del(...(await redis.keys(`${prefix}:*`)));
  });
});
