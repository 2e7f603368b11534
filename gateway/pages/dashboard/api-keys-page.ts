import type { Router } from "@koa/router";
import { redirect, type Ctx } from "../page-http.ts";
import { checkFreshCode, dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { formId, pageUrl, problemOf, queryText, timeText } from "./page-kit.ts";

const PATH = `${DASHBOARD}/api-keys`;
const NOTICES = new Map([["revoked", "The key is revoked: requests with it now answer 401."]]);

interface Screen {
  status?: number;
  error?: string;
  notice?: string;
  created?: { id: string; key: string };
}

/**
 * API keys: every key by prefix, creation, last use (to the minute) and
 * revocation; DEVELOPER, ADMIN and OWNER create (with a fresh TOTP code in the
 * same form; the key is shown once, on the answer to that POST) and revoke.
 * The same merchants RPCs as the operator's key routes.
 */
export function apiKeysPage(router: Router, deps: DashboardDeps): void {
  const merchants = deps.clients.merchants;

  async function render(ctx: Ctx, signed: Signed, screen: Screen = {}) {
    const cursor = queryText(ctx, "cursor");
    const res = await merchants.listApiKeys({ merchantId: signed.member.merchantId, limit: 50, cursor });
    deps.pages.page(ctx, screen.status ?? 200, "dashboard/api-keys", {
      frame: signed.frame("API keys", PATH),
      canManage: signed.may("api-keys.manage"),
      keys: res.keys.map((k) => ({
        id: k.id,
        prefix: `${k.prefix}…`,
        created: timeText(k.createdAt),
        lastUsed: k.lastUsedAt ? timeText(k.lastUsedAt) : "Never",
        revoked: k.revokedAt ? timeText(k.revokedAt) : undefined,
      })),
      nextUrl: res.hasMore ? pageUrl(PATH, {}, res.nextCursor) : undefined,
      firstUrl: cursor ? PATH : undefined,
      createdKey: screen.created?.key,
      createdKeyId: screen.created?.id,
      error: screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, PATH, {
    async get(ctx, signed) {
      const done = NOTICES.get(queryText(ctx, "done") ?? "");
      return render(ctx, signed, { ...(done && { notice: done }) });
    },
    async post(ctx, signed, form) {
      if (!["create-api-key", "revoke-api-key"].includes(form.action ?? "")) return render(ctx, signed, { status: 400, error: "Choose what to do." });
      if (!signed.may("api-keys.manage")) return refuse(deps, ctx, signed, PATH);
      try {
        if (form.action === "create-api-key") {
          const codeProblem = await checkFreshCode(deps, ctx, signed, form);
          if (codeProblem) return render(ctx, signed, { status: 401, error: codeProblem });
          const res = await merchants.createApiKey({ merchantId: signed.member.merchantId });
          return render(ctx, signed, { status: 201, created: { id: res.id, key: res.apiKey } });
        }
        await merchants.revokeApiKey({ merchantId: signed.member.merchantId, keyId: formId(form.keyId) });
        return redirect(ctx, `${PATH}?done=revoked`);
      } catch (err) {
        const problem = problemOf(err);
        if (!problem) throw err;
        if (problem.notFound) return notFoundPage(deps, ctx);
        return render(ctx, signed, { status: problem.status, error: problem.message });
      }
    },
  });
}
