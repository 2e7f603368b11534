import { createHash, timingSafeEqual } from "node:crypto";
import type { Middleware } from "koa";
import { WORKER_GROUP_NAMES, type Config } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import { Queues } from "../services/platform/queue/queues.ts";
import { ADMIN_KEY_HEADER } from "./middleware/admin-key.ts";

const QUEUE_DASHBOARD_PATH = "/admin/queues";

interface QueueDashboard {
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
  const inside = (path: string) => path === QUEUE_DASHBOARD_PATH || path.startsWith(`${QUEUE_DASHBOARD_PATH}/`);
  if (!config.adminApiKey) {
    // No operator key: no dashboard and no Redis connection for it; the path is as unknown as any other (404).
    return {
      middleware: async (ctx, next) => {
        if (inside(ctx.path)) ctx.state.metricsRoute = `${QUEUE_DASHBOARD_PATH}/*`;
        return next();
      },
      close: async () => {},
    };
  }
  // Built on the first request inside it, not at start: bull-board's UI and its Redis connection are megabytes of
  // every gateway's RSS that most processes never use (issue 27).
  let built: Promise<{ queues: Queues; board: Middleware }> | undefined;
  const build = async () => {
    const [{ createBullBoard }, { BullMQAdapter }, { KoaAdapter }] = await Promise.all([
      import("@bull-board/api"),
      import("@bull-board/api/bullMQAdapter"),
      import("@bull-board/koa"),
    ]);
    const queues = new Queues(config, config.queuePrefix, logger);
    const serverAdapter = new KoaAdapter();
    serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
    const write = config.queueDashboardWrite;
    createBullBoard({
      // Each group's jobs, then its sweeps apart (their runs every 0.5 s would bury the jobs).
      queues: WORKER_GROUP_NAMES.flatMap((group) => [
        new BullMQAdapter(queues.queue(group), { readOnlyMode: !write, allowRetries: write, description: `${group} jobs` }),
        new BullMQAdapter(queues.sweepQueue(group), {
          readOnlyMode: !write,
          allowRetries: write,
          description: `${group} recurring sweeps (job schedulers; each also runs on demand)`,
        }),
      ]),
      serverAdapter,
      options: { uiConfig: { boardTitle: "Billing queues" } },
    });
    return { queues, board: serverAdapter.registerPlugin() as Middleware };
  };
  const guard = dashboardGuard(config.adminApiKey);
  const middleware: Middleware = async (ctx, next) => {
    if (!inside(ctx.path)) return next();
    ctx.state.metricsRoute = `${QUEUE_DASHBOARD_PATH}/*`;
    if (!guard(ctx)) return;
    ctx.set("Content-Security-Policy", DASHBOARD_CSP);
    built ??= build().catch((err: unknown) => {
      built = undefined; // the next request tries again
      throw err;
    });
    const { board } = await built;
    await board(ctx, next);
    if (typeof ctx.body === "string" && ctx.response.is("html")) ctx.body = withoutExternalAssets(ctx.body);
  };
  return { middleware, close: async () => (built ? (await built).queues.close() : undefined) };
}

/**
 * The dashboard loads nothing from outside the deployment: operators' browsers may have no way out,
 * and an outside host would learn who opens it when. Its own bundle needs no inline script; React and
 * the loading placeholder set inline styles.
 */
const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join("; ");

/** bull-board's page links Google Fonts (IBM Plex): dropped, its CSS falls back to the system's sans-serif and monospace. */
function withoutExternalAssets(html: string): string {
  return html
    .replace(/<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi, "")
    .replace(/<script\b[^>]*\bsrc="(?:https?:)?\/\/[^"]*"[^>]*>\s*<\/script>\s*/gi, "");
}

/** Answers 401 with a Basic challenge and returns false, unless the key was presented. */
function dashboardGuard(adminApiKey: string) {
  const expected = digest(adminApiKey);
  return (ctx: Parameters<Middleware>[0]): boolean => {
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
