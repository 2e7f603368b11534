/**
 * The read baseline's bare server (../shared/bench/lib/server.mjs, GET only)
 * with the fixed design's HTTP layer in front: Koa 3 and @koa/router, nothing
 * of ours. Same pool (10), same named statement, same in-memory key lookup by
 * SHA-256, same JSON. What this answers at against the bare server is the
 * most B1 can reach with Koa in front (framework-floor.ts). Forked with an IPC
 * channel: sends { port } once listening.
 */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import Koa from "koa";
import pg from "pg";

/** The baseline's statement, word for word (its GET_SUB). */
const GET_SUB = "SELECT id, merchant_id, status, plan_id, amount, metadata, created_at FROM bench_subscription WHERE id = $1 AND merchant_id = $2";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const databaseUrl = process.env.FLOOR_DATABASE_URL;
if (!databaseUrl) throw new Error("FLOOR_DATABASE_URL is not set");
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const keys = new Map(
  (await pool.query<{ key_hash: string; merchant_id: string }>("SELECT key_hash, merchant_id FROM bench_api_key")).rows.map((r) => [r.key_hash, r.merchant_id]),
);

const app = new Koa<{ merchantId: string }>();
const router = new Router<{ merchantId: string }>();
app.use(async (ctx, next) => {
  const merchantId = keys.get(sha256(ctx.get("x-api-key")));
  if (!merchantId) {
    ctx.status = 401;
    ctx.body = { error: "unauthorized" };
    return;
  }
  ctx.state.merchantId = merchantId;
  await next();
});
router.get("/api/v1/subscriptions/:id", async (ctx) => {
  const { rows } = await pool.query({ name: "get_sub", text: GET_SUB, values: [ctx.params.id, ctx.state.merchantId] });
  if (rows.length === 0) {
    ctx.status = 404;
    ctx.body = { error: "not_found" };
    return;
  }
  ctx.body = rows[0];
});
app.use(router.routes());

const server = createServer(app.callback());
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on("SIGTERM", () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  setTimeout(() => process.exit(0), 3000).unref();
});
process.on("disconnect", () => process.exit(0));
