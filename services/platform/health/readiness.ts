import http2 from "node:http2";
import type { RedisConnection } from "../redis.ts";
import type { Orm } from "../database/orm.ts";

/** One dependency's state: "ok", or why it is not usable. */
export type CheckResult = "ok" | string;
export type ReadinessChecks = Record<string, () => Promise<CheckResult>>;

/**
 * Runs every check at once, each bounded by `timeoutMs`: a readiness probe
 * must answer quickly precisely when a dependency hangs.
 */
export async function runChecks(checks: ReadinessChecks, timeoutMs: number): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<CheckResult>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
      });
      const result = await Promise.race([check().catch((e: Error) => `unreachable: ${e.message}`), timeout]);
      clearTimeout(timer);
      return [name, result] as const;
    }),
  );
  const results = Object.fromEntries(entries);
  return { ready: entries.every(([, r]) => r === "ok"), checks: results };
}

/** The process's own pool: a slot can be taken and a statement answered. */
export function postgresCheck(orm: Orm): () => Promise<CheckResult> {
  return async () => {
    await orm.em.fork().execute("select 1");
    return "ok";
  };
}

/** ioredis states of a connection that is being made (at start-up, or after a drop). */
const CONNECTING = new Set(["wait", "connecting", "connect", "reconnecting"]);

/**
 * Redis answers PING. A connection still being made is waited for first, at
 * most `connectWaitMs`: the gateway's fail-fast connections (no offline queue)
 * refuse every command until they are ready, which right after start-up would
 * report a healthy Redis as unreachable. One that does not get ready in time
 * is reported as it is.
 */
export function redisCheck(redis: Pick<RedisConnection, "ping" | "status" | "once" | "off">, connectWaitMs = 1_000): () => Promise<CheckResult> {
  return async () => {
    if (CONNECTING.has(redis.status)) {
      let onReady: () => void = () => {};
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        onReady = resolve;
        timer = setTimeout(resolve, connectWaitMs);
        redis.once("ready", onReady);
      });
      clearTimeout(timer);
      redis.off("ready", onReady);
      if (redis.status !== "ready") return `unreachable: not connected within ${connectWaitMs} ms (${redis.status})`;
    }
    await redis.ping();
    return "ok";
  };
}

/**
 * A services process's own /readyz, over the same h2c port it serves RPC on:
 * the gateway is ready only when the services it calls are.
 */
export function serviceCheck(baseUrl: string, timeoutMs: number): () => Promise<CheckResult> {
  return () =>
    new Promise<CheckResult>((resolve) => {
      let session: http2.ClientHttp2Session;
      try {
        session = http2.connect(baseUrl);
      } catch (e) {
        resolve(`unreachable: ${(e as Error).message}`);
        return;
      }
      const done = (result: CheckResult) => {
        clearTimeout(timer);
        session.destroy();
        resolve(result);
      };
      const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
      session.on("error", (e) => done(`unreachable: ${e.message}`));
      const req = session.request({ ":method": "GET", ":path": "/readyz" });
      req.on("error", (e) => done(`unreachable: ${e.message}`));
      req.on("response", (headers) => {
        const status = Number(headers[":status"]);
        req.resume();
        req.on("end", () => done(status === 200 ? "ok" : `not ready (${status})`));
      });
      req.end();
    });
}
