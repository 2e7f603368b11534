import type { Router } from "@koa/router";
import type { WebhookEndpoint } from "../../../proto/gen/billing/events/v1/events_pb.ts";
import { redirect, type Ctx, type Form } from "../page-http.ts";
import { dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { formId, pageUrl, problemOf, queryText, timeText } from "./page-kit.ts";
import { attemptOutcomeText, deliveryStatusText, endpointStatusText } from "./words.ts";

const PATH = `${DASHBOARD}/webhooks`;
const NOTICES = new Map([
  ["enabled", "The endpoint is enabled: pending deliveries resume."],
  ["disabled", "The endpoint is disabled: nothing is sent to it until you enable it."],
  ["redelivered", "The event is queued again for this endpoint, with a fresh retry schedule."],
]);
const ENDPOINT_ACTIONS = ["enable-webhook-endpoint", "disable-webhook-endpoint", "rotate-webhook-secret", "redeliver-event"];

interface Screen {
  status?: number;
  error?: string;
  notice?: string;
  secret?: string;
  form?: Form;
}

const endpointView = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  description: e.description ?? "",
  events: e.enabledEvents.includes("*") ? "All events" : e.enabledEvents.join(", "),
  status: e.status,
  statusText: endpointStatusText(e.status),
  disabledReason: e.disabledReason ?? "",
  created: timeText(e.createdAt),
});

/** "a.b, c.d e.f" → ["a.b", "c.d", "e.f"]; empty = every event (the API's default). */
const eventList = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter((t) => t !== "");

/**
 * Webhooks: the endpoints (create, with the signing secret shown once), and
 * per endpoint its settings (enable, disable, rotate the secret: shown once)
 * and its delivery log with every attempt (time, status code, duration,
 * response excerpt), each delivery's event redeliverable. Managing needs
 * webhooks.manage, redelivering events.redeliver; the events RPCs of
 * /api/v1/webhook-endpoints and /api/v1/events/{id}/redeliver.
 */
export function webhooksPage(router: Router, deps: DashboardDeps): void {
  const events = deps.clients.events;

  async function renderList(ctx: Ctx, signed: Signed, screen: Screen = {}) {
    const cursor = queryText(ctx, "cursor");
    const res = await events.listWebhookEndpoints({ merchantId: signed.member.merchantId, limit: 50, cursor });
    deps.pages.page(ctx, screen.status ?? 200, "dashboard/webhooks", {
      frame: signed.frame("Webhooks", PATH),
      canManage: signed.may("webhooks.manage"),
      endpoints: res.endpoints.map(endpointView),
      nextUrl: res.hasMore ? pageUrl(PATH, {}, res.nextCursor) : undefined,
      firstUrl: cursor ? PATH : undefined,
      secret: screen.secret,
      url: screen.form?.url ?? "",
      description: screen.form?.description ?? "",
      enabledEvents: screen.form?.enabledEvents ?? "",
      error: screen.error,
    });
  }

  dashboardRoute(router, deps, PATH, {
    get: (ctx, signed) => renderList(ctx, signed),
    async post(ctx, signed, form) {
      if (form.action !== "create-webhook-endpoint") return renderList(ctx, signed, { status: 400, error: "Choose what to do." });
      if (!signed.may("webhooks.manage")) return refuse(deps, ctx, signed, PATH);
      try {
        const res = await events.createWebhookEndpoint({
          merchantId: signed.member.merchantId,
          url: (form.url ?? "").trim(),
          enabledEvents: eventList(form.enabledEvents),
          description: form.description?.trim() || undefined,
        });
        return renderEndpoint(ctx, signed, res.endpoint!.id, { status: 201, secret: res.secret, notice: "The endpoint is created." });
      } catch (err) {
        const problem = problemOf(err);
        if (!problem) throw err;
        return renderList(ctx, signed, { status: problem.status, error: problem.message, form });
      }
    },
  });

  async function renderEndpoint(ctx: Ctx, signed: Signed, id: string, screen: Screen = {}) {
    const merchantId = signed.member.merchantId;
    const filters = { status: queryText(ctx, "status"), eventId: queryText(ctx, "eventId") };
    const cursor = queryText(ctx, "cursor");
    const { endpoint } = await events.getWebhookEndpoint({ merchantId, id });
    let problem: string | undefined;
    let page: Awaited<ReturnType<typeof events.listWebhookDeliveries>> | undefined;
    try {
      page = await events.listWebhookDeliveries({ merchantId, endpointId: id, limit: 20, cursor, ...filters });
    } catch (err) {
      // A bad filter (unknown status, malformed cursor): the page with the reason, not a 500.
      const p = problemOf(err);
      if (!p || p.notFound) throw err;
      problem = p.message;
    }
    const path = `${PATH}/${endpoint!.id}`;
    deps.pages.page(ctx, problem ? 400 : (screen.status ?? 200), "dashboard/webhook-endpoint", {
      frame: signed.frame("Webhook endpoint", PATH),
      canManage: signed.may("webhooks.manage"),
      canRedeliver: signed.may("events.redeliver"),
      endpoint: endpointView(endpoint!),
      path,
      secret: screen.secret,
      filters: { status: filters.status ?? "", eventId: filters.eventId ?? "" },
      statuses: ["PENDING", "SUCCEEDED", "FAILED"].map((s) => ({ value: s, label: deliveryStatusText(s), selected: s === filters.status })),
      deliveries: (page?.deliveries ?? []).map((d) => ({
        id: d.id,
        eventId: d.eventId,
        eventType: d.eventType,
        status: d.status,
        statusText: deliveryStatusText(d.status),
        created: timeText(d.createdAt),
        next: d.nextAttemptAt && d.status === "PENDING" ? timeText(d.nextAttemptAt) : "",
        attempts: d.attempts.map((a) => ({
          number: a.attemptNumber,
          at: timeText(a.attemptedAt),
          outcome: attemptOutcomeText(a.outcome),
          statusCode: a.statusCode === undefined ? "no answer" : String(a.statusCode),
          duration: a.durationMs === undefined ? "" : `${a.durationMs} ms`,
          error: a.error ?? "",
          excerpt: a.responseExcerpt ?? "",
        })),
      })),
      nextUrl: page?.hasMore ? pageUrl(path, filters, page.nextCursor) : undefined,
      firstUrl: cursor ? pageUrl(path, filters) : undefined,
      error: problem ?? screen.error,
      notice: screen.notice,
    });
  }

  /** Another merchant's endpoint (or no endpoint) is the 404 page, for reading and for acting. */
  const orNotFound = async (ctx: Ctx, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      if (problemOf(err)?.notFound) return notFoundPage(deps, ctx);
      throw err;
    }
  };

  dashboardRoute(router, deps, `${PATH}/:id`, {
    async get(ctx, signed) {
      const done = NOTICES.get(queryText(ctx, "done") ?? "");
      await orNotFound(ctx, () => renderEndpoint(ctx, signed, ctx.params.id!, { ...(done && { notice: done }) }));
    },
    async post(ctx, signed, form) {
      const id = ctx.params.id!;
      const action = form.action ?? "";
      if (!ENDPOINT_ACTIONS.includes(action)) return orNotFound(ctx, () => renderEndpoint(ctx, signed, id, { status: 400, error: "Choose what to do." }));
      if (!signed.may(action === "redeliver-event" ? "events.redeliver" : "webhooks.manage")) return refuse(deps, ctx, signed, PATH);
      const merchantId = signed.member.merchantId;
      await orNotFound(ctx, async () => {
        try {
          if (action === "rotate-webhook-secret") {
            const res = await events.rotateWebhookSecret({ merchantId, id });
            return await renderEndpoint(ctx, signed, id, {
              secret: res.secret,
              notice: "The secret is replaced. The previous one keeps signing alongside it for 24 hours.",
            });
          }
          if (action === "enable-webhook-endpoint") await events.enableWebhookEndpoint({ merchantId, id });
          else if (action === "disable-webhook-endpoint") await events.disableWebhookEndpoint({ merchantId, id });
          else await events.redeliverEvent({ merchantId, eventId: formId(form.eventId), endpointId: id });
          const done = { "enable-webhook-endpoint": "enabled", "disable-webhook-endpoint": "disabled", "redeliver-event": "redelivered" }[action];
          return redirect(ctx, `${PATH}/${id}?done=${done}`);
        } catch (err) {
          const problem = problemOf(err);
          if (!problem || problem.notFound) throw err;
          return renderEndpoint(ctx, signed, id, { status: problem.status, error: problem.message });
        }
      });
    },
  });
}
