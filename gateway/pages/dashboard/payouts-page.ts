import { randomUUID } from "node:crypto";
import type { Router } from "@koa/router";
import { ASSET_CODES } from "../../../services/wallet/contract.ts";
import { VISIBLE_PAYOUT_STATUSES } from "../../../services/payouts/contract.ts";
import { recordOf } from "../../../services/platform/rpc/record-json.ts";
import { amountText, formatUtc } from "../page-text.ts";
import { redirect, type Ctx, type Form } from "../page-http.ts";
import { checkFreshCode, dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { formId, pageUrl, problemOf, queryText } from "./page-kit.ts";
import { destinationStatusText, payoutStatusText } from "./words.ts";

const PATH = `${DASHBOARD}/payouts`;
const ACTIONS = ["add-payout-destination", "activate-payout-destination", "create-payout", "cancel-payout"];
const NOTICES = new Map([
  ["destination-added", "The destination is added. It can be paid out to once its cooling period ends."],
  ["destination-active", "The destination is active: you can pay out to it now."],
  ["payout-created", "The payout is created: its amount and fee left your available balance."],
  ["payout-cancelled", "The payout is cancelled: its amount and fee are back in your balance."],
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Screen {
  status?: number;
  error?: string;
  notice?: string;
  form?: Form;
}

const when = (iso: unknown) => (typeof iso === "string" ? formatUtc(new Date(iso)) : "");

/**
 * Payouts: destinations (add, and activate early) and payouts (create,
 * cancel a PENDING one), for payouts.manage (OWNER, ADMIN). Adding or
 * activating a destination and creating a payout ask for a fresh TOTP code
 * in the same form; an owner or admin adding a destination may activate it at
 * once (ActivatePayoutDestination, which the REST API does not offer: there
 * the cooling period guards against a leaked key). The payouts RPCs of
 * /api/v1/payout-destinations and /api/v1/payouts.
 */
export function payoutsPage(router: Router, deps: DashboardDeps): void {
  const payouts = deps.clients.payouts;

  async function render(ctx: Ctx, signed: Signed, screen: Screen = {}) {
    const merchantId = signed.member.merchantId;
    const status = queryText(ctx, "status");
    const cursor = queryText(ctx, "cursor");
    const destinations = (await payouts.listPayoutDestinations({ merchantId, limit: 100 })).destinations.map((d) => {
      const r = recordOf(d);
      return {
        id: d.id,
        asset: d.asset,
        network: d.network,
        address: d.address,
        label: typeof r.label === "string" ? r.label : "",
        status: d.status,
        statusText: destinationStatusText(d.status),
        activatesAt: when(r.activatesAt),
      };
    });
    let problem: string | undefined;
    let page: Awaited<ReturnType<typeof payouts.listPayouts>> | undefined;
    try {
      page = await payouts.listPayouts({ merchantId, status, limit: 20, cursor });
    } catch (err) {
      const p = problemOf(err);
      if (!p) throw err;
      problem = p.message;
    }
    const addressOf = new Map(destinations.map((d) => [d.id, d.label ? `${d.label} (${d.address})` : d.address]));
    const canManage = signed.may("payouts.manage");
    const form = screen.form ?? {};
    deps.pages.page(ctx, problem ? 400 : (screen.status ?? 200), "dashboard/payouts", {
      frame: signed.frame("Payouts", PATH),
      canManage,
      canActivateNow: canManage,
      destinations,
      payable: destinations
        .filter((d) => d.status === "ACTIVE")
        .map((d) => ({ id: d.id, label: `${d.asset}: ${addressOf.get(d.id)}`, selected: d.id === form.destinationId })),
      assets: ASSET_CODES.map((a) => ({ value: a, selected: a === form.asset })),
      statuses: VISIBLE_PAYOUT_STATUSES.map((s) => ({ value: s, label: payoutStatusText(s), selected: s === status })),
      payouts: (page?.payouts ?? []).map((p) => {
        const r = recordOf(p);
        return {
          id: p.id,
          created: when(r.createdAt),
          amount: amountText(p.amount, p.asset),
          fee: amountText(p.fee, p.asset),
          status: p.status,
          statusText: payoutStatusText(p.status),
          to: typeof r.destinationId === "string" ? (addressOf.get(r.destinationId) ?? String(r.address ?? "")) : String(r.address ?? ""),
          txHash: p.txHash ?? "",
          failure: typeof r.failureReason === "string" ? r.failureReason : "",
          cancellable: p.status === "PENDING",
        };
      }),
      nextUrl: page?.hasMore ? pageUrl(PATH, { status }, page.nextCursor) : undefined,
      firstUrl: cursor ? pageUrl(PATH, { status }) : undefined,
      address: form.address ?? "",
      label: form.label ?? "",
      amount: form.amount ?? "",
      idempotencyKey: randomUUID(),
      error: problem ?? screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, PATH, {
    async get(ctx, signed) {
      const done = NOTICES.get(queryText(ctx, "done") ?? "");
      return render(ctx, signed, { ...(done && { notice: done }) });
    },
    async post(ctx, signed, form) {
      const action = form.action ?? "";
      if (!ACTIONS.includes(action)) return render(ctx, signed, { status: 400, error: "Choose what to do." });
      if (!signed.may("payouts.manage")) return refuse(deps, ctx, signed, PATH);
      const merchantId = signed.member.merchantId;
      const kept = { asset: form.asset, address: form.address, label: form.label, amount: form.amount, destinationId: form.destinationId };
      try {
        if (action === "cancel-payout") {
          await payouts.cancelPayout({ merchantId, id: formId(form.payoutId) });
          return redirect(ctx, `${PATH}?done=payout-cancelled`);
        }
        // Another merchant's destination is the 404 page before the code is asked for (and spent).
        if (action === "activate-payout-destination") await payouts.getPayoutDestination({ merchantId, id: formId(form.destinationId) });
        const codeProblem = await checkFreshCode(deps, ctx, signed, form);
        if (codeProblem) return render(ctx, signed, { status: 401, error: codeProblem, form: kept });
        if (action === "activate-payout-destination") {
          await payouts.activatePayoutDestination({ merchantId, id: formId(form.destinationId) });
          return redirect(ctx, `${PATH}?done=destination-active`);
        }
        if (action === "add-payout-destination") {
          const { destination } = await payouts.createPayoutDestination({
            merchantId,
            asset: form.asset ?? "",
            address: (form.address ?? "").trim(),
            label: form.label?.trim() || undefined,
          });
          if (form.activateNow === "yes" && destination!.status !== "ACTIVE") {
            await payouts.activatePayoutDestination({ merchantId, id: destination!.id });
            return redirect(ctx, `${PATH}?done=destination-active`);
          }
          return redirect(ctx, `${PATH}?done=${destination!.status === "ACTIVE" ? "destination-active" : "destination-added"}`);
        }
        const key = formId(form.idempotencyKey);
        await payouts.createPayout({
          merchantId,
          destinationId: formId(form.destinationId),
          amount: (form.amount ?? "").trim(),
          metadataJson: "{}",
          // A double-submitted form is one payout: the key is made when the form is shown.
          idempotencyKey: UUID.test(key) ? `dashboard-${key.toLowerCase()}` : undefined,
        });
        return redirect(ctx, `${PATH}?done=payout-created`);
      } catch (err) {
        const problem = problemOf(err);
        if (!problem) throw err;
        if (problem.notFound) return notFoundPage(deps, ctx);
        return render(ctx, signed, { status: problem.status, error: problem.message, form: kept });
      }
    },
  });
}
