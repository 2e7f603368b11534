import type { Router } from "@koa/router";
import { EVENT_TYPES } from "../../../services/events/contract.ts";
import { redirect, type Ctx } from "../page-http.ts";
import { dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { formId, pageUrl, problemOf, queryText, timeText } from "./page-kit.ts";

const PATH = `${DASHBOARD}/events`;

/** The record as the API and webhooks send it, indented for people (escaped by the template like any text). */
function prettyJson(recordJson: string): string {
  try {
    return JSON.stringify(JSON.parse(recordJson), null, 2);
  } catch {
    return recordJson;
  }
}

/**
 * Events: the feed newest first with a type filter and keyset paging, each
 * event's JSON (the body webhooks send) in a <pre>; events.redeliver sends one
 * again to every enabled endpoint. The events RPCs of GET /api/v1/events.
 */
export function eventsPage(router: Router, deps: DashboardDeps): void {
  const events = deps.clients.events;

  async function render(ctx: Ctx, signed: Signed, screen: { status?: number; error?: string; notice?: string } = {}) {
    const type = queryText(ctx, "type");
    const cursor = queryText(ctx, "cursor");
    let problem: string | undefined;
    let res: Awaited<ReturnType<typeof events.listEvents>> | undefined;
    try {
      res = await events.listEvents({ merchantId: signed.member.merchantId, limit: 20, cursor, type });
    } catch (err) {
      const p = problemOf(err);
      if (!p) throw err;
      problem = p.message;
    }
    deps.pages.page(ctx, problem ? 400 : (screen.status ?? 200), "dashboard/events", {
      frame: signed.frame("Events", PATH),
      canRedeliver: signed.may("events.redeliver"),
      types: EVENT_TYPES.map((t) => ({ value: t, selected: t === type })),
      events: (res?.events ?? []).map((e) => ({ id: e.id, type: e.type, created: timeText(e.createdAt), json: prettyJson(e.recordJson) })),
      nextUrl: res?.hasMore ? pageUrl(PATH, { type }, res.nextCursor) : undefined,
      firstUrl: cursor ? pageUrl(PATH, { type }) : undefined,
      error: problem ?? screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, PATH, {
    async get(ctx, signed) {
      return render(ctx, signed, queryText(ctx, "done") === "redelivered" ? { notice: "The event is queued again for every enabled endpoint." } : {});
    },
    async post(ctx, signed, form) {
      if (form.action !== "redeliver-event") return render(ctx, signed, { status: 400, error: "Choose what to do." });
      if (!signed.may("events.redeliver")) return refuse(deps, ctx, signed, PATH);
      try {
        await events.redeliverEvent({ merchantId: signed.member.merchantId, eventId: formId(form.eventId) });
        return redirect(ctx, `${PATH}?done=redelivered`);
      } catch (err) {
        const problem = problemOf(err);
        if (!problem) throw err;
        if (problem.notFound) return notFoundPage(deps, ctx);
        return render(ctx, signed, { status: problem.status, error: problem.message });
      }
    },
  });
}
