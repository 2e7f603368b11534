import { createHash, timingSafeEqual } from "node:crypto";
import type { Middleware } from "koa";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { KoaAdapter } from "@bull-board/koa";
import { WORKER_GROUP_NAMES, type Config } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import { Queues } from "../services/platform/queue/queues.ts";
import { ADMIN_KEY_HEADER } from "./middleware/admin-key.ts";

export const QUEUE_DASHBOARD_PATH = "/admin/queues";

export interface QueueDashboard {
  middleware: Middleware;
  close(): Promise<void>;
}

/**
 * bull-board over every worker group's queue, for operators. It exists only
 * with ADMIN_API_KEY (404 otherwise, like the operator API) and takes the
 * same key as X-ADMIN-KEY or as the password of HTTP Basic (any user name),
 * so a browser can open it. Read-only unless QUEUE_DASHBOARD_WRITE=true:
 * jobs are prompts for work Postgres already records, so retrying or
 * removing them is safe, but it stays an explicit choice.
 */
export function queueDashboard(config: Config, logger: Logger): QueueDashboard {
  const queues = new Queues(config, config.queuePrefix, logger);
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  const write = config.queueDashboardWrite;
  createBullBoard({
    queues: WORKER_GROUP_NAMES.map((group) => new BullMQAdapter(queues.queue(group), { readOnlyMode: !write, allowRetries: write })),
    serverAdapter,
    options: { uiConfig: { boardTitle: "Billing queues" } },
  });
  const board = serverAdapter.registerPlugin();
  const guard = dashboardGuard(config.adminApiKey);
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== QUEUE_DASHBOARD_PATH && !ctx.path.startsWith(`${QUEUE_DASHBOARD_PATH}/`)) return next();
    ctx.state.metricsRoute = `${QUEUE_DASHBOARD_PATH}/*`;
    if (!guard(ctx)) return;
    return board(ctx, next);
  };
  return { middleware, close: () => queues.close() };
}

/** Answers 404 (no key configured) or 401 with a Basic challenge, and returns false; true when the key was presented. */
function dashboardGuard(adminApiKey: string | undefined) {
  const expected = adminApiKey ? digest(adminApiKey) : undefined;
  return (ctx: Parameters<Middleware>[0]): boolean => {
    if (!expected) {
      ctx.status = 404;
      ctx.body = { error: "NOT_FOUND", message: `no route for ${ctx.method} ${ctx.path}` };
      return false;
    }
    const presented = ctx.get(ADMIN_KEY_HEADER) || basicPassword(ctx.get("authorization"));
    if (presented && timingSafeEqual(digest(presented), expected)) return true;
    ctx.status = 401;
    ctx.set("WWW-Authenticate", 'Basic realm="billing queues", charset="UTF-8"');
    ctx.body = { error: "INVALID_ADMIN_KEY", message: "X-ADMIN-KEY header or HTTP Basic password (the admin key) is missing or wrong" };
    return false;
  };
}

function basicPassword(header: string): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

const digest = (value: string) => createHash("sha256").update(value).digest();
