import { createHash, timingSafeEqual } from "node:crypto";
import type { Middleware } from "koa";
import { HttpError } from "../http-errors.ts";
import { setActor } from "../../services/platform/audit/call-context.ts";

export const ADMIN_KEY_HEADER = "x-admin-key";

/**
 * The operator API exists only when ADMIN_API_KEY is set: otherwise its
 * routes answer 404 as if they were not there.
 */
export function adminKey(configured: string | undefined): Middleware {
  const expected = configured ? digest(configured) : undefined;
  return async (ctx, next) => {
    if (!expected) throw new HttpError(404, "NOT_FOUND", `no route for ${ctx.method} ${ctx.path}`);
    const presented = ctx.get(ADMIN_KEY_HEADER);
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      throw new HttpError(401, "INVALID_ADMIN_KEY", "X-ADMIN-KEY header is missing or wrong");
    }
    // One shared operator key: the operator is one actor (per-person operator identities are not modelled).
    setActor(OPERATOR);
    await next();
  };
}

const digest = (value: string) => createHash("sha256").update(value).digest();

const OPERATOR = Object.freeze({ type: "operator" as const, id: "admin-api-key", label: "operator API (X-ADMIN-KEY)" });
