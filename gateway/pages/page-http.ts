import type { ParameterizedContext } from "koa";
import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../services/platform/logger.ts";
import { fromConnectError } from "../http-errors.ts";
import type { PageModels, PageViews } from "./views.ts";

/** What every hosted page does with HTTP: read a form, answer a page or a redirect, set its headers, turn failures into a page. */
export type Ctx = ParameterizedContext & { params: Record<string, string> };
export type Form = Record<string, string | undefined>;

export function formBody(ctx: Ctx): Form {
  const body = (ctx.request as { body?: unknown }).body;
  if (!body || typeof body !== "object") return {};
  const out: Form = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    // A repeated field arrives as an array: take the first value.
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === "string") out[k] = first;
  }
  return out;
}

/** POST → 303 → GET: a reload never posts the form again. */
export function redirect(ctx: Ctx, url: string): void {
  ctx.redirect(url);
  ctx.status = 303;
}

/** No caching, no framing, no referrer (the URL holds the token), no scripts at all. */
export function securityHeaders(ctx: Ctx, redirectOrigins: string[]): void {
  ctx.set("Cache-Control", "no-store");
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self' ${redirectOrigins.join(" ")}; frame-ancestors 'none'; base-uri 'none'`,
  );
}

export interface PageResponder {
  /** Answers `status` with the view rendered from `model`. */
  page<K extends keyof PageModels>(ctx: Ctx, status: number, name: K, model: PageModels[K]): void;
  /** A page with only a heading and a sentence. */
  statusPage(ctx: Ctx, status: number, title: string, message: string): void;
  /** 403: a form without the session's CSRF token (or without a session). */
  staleForm(ctx: Ctx): void;
  /** Runs a handler; any failure becomes a page, logged whole and shown without details. */
  guarded(ctx: Ctx, fn: () => Promise<void>): Promise<void>;
}

export function pageResponder(views: PageViews, logger: Logger): PageResponder {
  const responder: PageResponder = {
    page(ctx, status, name, model) {
      ctx.status = status;
      ctx.type = "text/html; charset=utf-8";
      ctx.body = views.render(name, model);
    },
    statusPage: (ctx, status, title, message) => responder.page(ctx, status, "status", { title, message }),
    staleForm: (ctx) =>
      responder.statusPage(ctx, 403, "Please reload the page", "Your session on this page has expired or the form is stale. Reload the page and try again."),
    async guarded(ctx, fn) {
      try {
        await fn();
      } catch (err) {
        // The API's own reading of an RPC failure: a broken connection to a service is "try again" here too.
        const status = err instanceof ConnectError ? fromConnectError(err).status : 500;
        const unavailable = status === 503 || status === 504;
        logger.error({ err, path: ctx.path.replace(/[^/]+$/, "<token>") }, "hosted page failed");
        ctx.set("Cache-Control", "no-store");
        responder.statusPage(ctx, unavailable ? 503 : 500, "Something went wrong", "We could not complete this step. Please try again in a moment.");
      }
    },
  };
  return responder;
}
