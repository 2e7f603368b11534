import { randomUUID } from "node:crypto";
import type { Router } from "@koa/router";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { IntervalSchema } from "../../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { isUuid } from "../../../services/platform/ids.ts";
import { amount, compare } from "../../../services/platform/money.ts";
import { enumName } from "../../../services/platform/rpc/proto-enums.ts";
import { amountText, every, formatUtc } from "../page-text.ts";
import { redirect, type Ctx, type Form } from "../page-http.ts";
import type { DashboardFrame } from "../views.ts";
import { dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { planNames } from "./plan-names.ts";
import { refusalOf, type Refusal } from "./service-refusal.ts";
import { SUBSCRIPTIONS_PATH } from "./subscriptions-page.ts";
import { authorizationStatusWords, cancellationWords, chargeStatusWords, refundStatusWords, subscriptionStatusWords } from "./words.ts";

const LIST_LIMIT = 100;
const NOTICES = new Map([
  ["paused", "The subscription is paused: nothing is charged until it is resumed."],
  ["resumed", "The subscription is resumed."],
  ["cancelled", "The subscription is cancelled: nothing more is charged."],
  ["refunded", "The refund is made: the money is back in the customer's wallet."],
]);
const DONE: Record<string, string> = { pause: "paused", resume: "resumed", cancel: "cancelled" };
const REFUSALS = new Map([
  ["INVALID_STATUS_TRANSITION", "This subscription cannot do that in its current status."],
  ["REFUND_EXCEEDS_CHARGE", "That is more than remains to refund on this charge."],
  ["CHARGE_NOT_REFUNDABLE", "Only a succeeded charge can be refunded."],
  ["MERCHANT_BALANCE_INSUFFICIENT", "Your balance in this asset is too low for this refund: nothing moved."],
  ["REFUND_IN_PROGRESS", "A refund of this charge is already being made: reload the page in a moment."],
]);

interface DashboardSubscriptionModel {
  frame: DashboardFrame;
  id: string;
  action: string;
  status: string;
  statusText: string;
  facts: { label: string; value: string }[];
  authorization: { label: string; value: string }[];
  actions: { value: string; label: string }[];
  canRefund: boolean;
  /** One per rendering: a form sent twice (back, resubmit) refunds once (the RPC's idempotency key). */
  refundKey: string;
  charges: {
    id: string;
    date: string;
    amount: string;
    asset: string;
    status: string;
    statusText: string;
    refunded: string;
    refundable: boolean;
    currency: string;
    refunds: { date: string; amount: string; assetAmount: string; statusText: string }[];
  }[];
  events: { id: string; type: string; date: string; json: string }[];
  error?: string | undefined;
  notice?: string | undefined;
}

declare module "../views.ts" {
  interface PageModels {
    "dashboard/subscription": DashboardSubscriptionModel;
  }
}

const at = (t: Timestamp | undefined) => (t ? formatUtc(timestampDate(t)) : "");

/**
 * One subscription: its facts, the customer's authorization, its charges with
 * their refunds, its events; pause/resume/cancel (subscriptions.manage) and a
 * refund per charge (refunds.create) through the same RPCs as the API.
 * Another merchant's id is the 404 page (the service answers NOT_FOUND).
 */
export function subscriptionPage(router: Router, deps: DashboardDeps): void {
  const { subscriptions, refunds, events, catalog } = deps.clients;
  const path = `${SUBSCRIPTIONS_PATH}/:id`;

  async function render(ctx: Ctx, signed: Signed, id: string, screen: { status?: number; error?: string; notice?: string } = {}) {
    const merchantId = signed.member.merchantId;
    const found = await load(deps, merchantId, id);
    const s = found?.subscription;
    if (!s) return notFoundPage(deps, ctx);
    const [charges, refundList, eventList, plans] = await Promise.all([
      subscriptions.listSubscriptionCharges({ merchantId, subscriptionId: s.id, limit: LIST_LIMIT }),
      refunds.listRefunds({ merchantId, subscriptionId: s.id, limit: LIST_LIMIT }),
      events.listEvents({ merchantId, objectId: s.id, limit: LIST_LIMIT }),
      planNames(deps, merchantId, [s.planId]),
    ]);
    const plan = await catalog.getPlan({ merchantId, id: s.planId }).then(
      (r) => r.plan,
      () => undefined,
    );
    const a = s.authorization;
    const canManage = signed.may("subscriptions.manage");
    deps.pages.page(ctx, screen.status ?? 200, "dashboard/subscription", {
      frame: signed.frame(`Subscription ${s.externalReference}`, SUBSCRIPTIONS_PATH),
      id: s.id,
      action: `${SUBSCRIPTIONS_PATH}/${s.id}`,
      status: s.status,
      statusText: subscriptionStatusWords(s.status),
      facts: [
        { label: "Id", value: s.id },
        { label: "Reference", value: s.externalReference },
        { label: "Customer", value: s.customerEmail ?? s.walletUserId },
        {
          label: "Plan",
          value: plan
            ? `${plan.name}: ${amountText(plan.amount, plan.currency)} every ${every(enumName(IntervalSchema, plan.interval), plan.intervalCount)}`
            : (plans.get(s.planId) ?? s.planId),
        },
        { label: "Paid with", value: s.fundingAsset ?? "—" },
        { label: "Current period", value: s.currentPeriodStart && s.currentPeriodEnd ? `${at(s.currentPeriodStart)} to ${at(s.currentPeriodEnd)}` : "—" },
        { label: "Next charge", value: at(s.nextBillingAt) || "—" },
        { label: "Created", value: at(s.createdAt) },
        ...(s.cancelledAt
          ? [{ label: "Cancelled", value: `${at(s.cancelledAt)}${s.cancellationReason ? `, ${cancellationWords(s.cancellationReason)}` : ""}` }]
          : []),
      ],
      authorization: a
        ? [
            { label: "Status", value: authorizationStatusWords(a.status) },
            { label: "Asked", value: at(a.createdAt) },
            { label: "Expires", value: at(a.expiresAt) },
            ...(a.approvedAt ? [{ label: "Approved", value: at(a.approvedAt) }] : []),
            ...(a.declinedAt ? [{ label: "Declined", value: at(a.declinedAt) }] : []),
          ]
        : [],
      actions: canManage ? ACTIONS : [],
      canRefund: signed.may("refunds.create"),
      refundKey: randomUUID(),
      charges: charges.charges.map((c) => ({
        id: c.id,
        date: at(c.createdAt),
        amount: amountText(c.amount, c.currency),
        asset: c.assetAmount ? amountText(c.assetAmount, c.asset) : c.asset,
        status: c.status,
        statusText: chargeStatusWords(c.status),
        refunded: c.amountRefunded && c.amountRefunded !== "0" ? amountText(c.amountRefunded, c.currency) : "",
        // Something left to refund (the service checks again, atomically).
        refundable: c.status === "SUCCEEDED" && compare(amount(c.amountRefunded || "0"), amount(c.amount)) < 0,
        currency: c.currency,
        refunds: refundList.refunds
          .filter((r) => r.chargeId === c.id)
          .map((r) => ({
            date: at(r.createdAt),
            amount: amountText(r.amount, r.currency),
            assetAmount: amountText(r.assetAmount, r.asset),
            statusText: refundStatusWords(r.status),
          })),
      })),
      events: eventList.events.map((e) => ({ id: e.id, type: e.type, date: at(e.createdAt), json: prettyJson(e.recordJson) })),
      error: screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, path, {
    async get(ctx, signed) {
      const done = typeof ctx.query.done === "string" ? NOTICES.get(ctx.query.done) : undefined;
      return render(ctx, signed, ctx.params.id!, done ? { notice: done } : {});
    },
    async post(ctx, signed, form) {
      const id = ctx.params.id!;
      const action = form.action ?? "";
      const merchantId = signed.member.merchantId;
      if (action === "refund") {
        if (!signed.may("refunds.create")) return refuse(deps, ctx, signed, SUBSCRIPTIONS_PATH);
        return refund(ctx, signed, id, form);
      }
      if (!Object.hasOwn(DONE, action)) return render(ctx, signed, id, { status: 400, error: "Choose what to do." });
      if (!signed.may("subscriptions.manage")) return refuse(deps, ctx, signed, SUBSCRIPTIONS_PATH);
      if (!isUuid(id)) return notFoundPage(deps, ctx);
      try {
        const call = { merchantId, id };
        if (action === "pause") await subscriptions.pauseSubscription(call);
        else if (action === "resume") await subscriptions.resumeSubscription(call);
        else await subscriptions.cancelSubscription(call);
      } catch (err) {
        return refused(ctx, signed, id, refusalOf(err));
      }
      return redirect(ctx, `${SUBSCRIPTIONS_PATH}/${id}?done=${DONE[action]}`);
    },
  });

  async function refund(ctx: Ctx, signed: Signed, id: string, form: Form) {
    const merchantId = signed.member.merchantId;
    const chargeId = form.chargeId ?? "";
    // The charge must be one of this subscription's (the service checks the merchant; this page checks the subscription).
    const found = await load(deps, merchantId, id);
    if (!found || !isUuid(chargeId)) return notFoundPage(deps, ctx);
    const charges = await subscriptions.listSubscriptionCharges({ merchantId, subscriptionId: id, limit: LIST_LIMIT });
    if (!charges.charges.some((c) => c.id === chargeId)) return notFoundPage(deps, ctx);
    const typed = (form.amount ?? "").trim();
    const key = form.refundKey ?? "";
    try {
      await refunds.createRefund({
        merchantId,
        chargeId,
        amount: typed || undefined,
        reason: "Refunded from the dashboard",
        metadataJson: "{}",
        idempotencyKey: isUuid(key) ? `dashboard-${key}-${chargeId}` : undefined,
      });
    } catch (err) {
      return refused(ctx, signed, id, refusalOf(err));
    }
    return redirect(ctx, `${SUBSCRIPTIONS_PATH}/${id}?done=refunded`);
  }

  function refused(ctx: Ctx, signed: Signed, id: string, refusal: Refusal) {
    if (refusal.status === 404 && refusal.code.startsWith("SUBSCRIPTION")) return notFoundPage(deps, ctx);
    const words = REFUSALS.get(refusal.code);
    // The service's own sentence says what remains, or which field is wrong; the API shows the same.
    const error = words ? `${words} (${refusal.message})` : refusal.message;
    return render(ctx, signed, id, { status: refusal.status, error });
  }
}

async function load(deps: DashboardDeps, merchantId: string, id: string) {
  if (!isUuid(id)) return undefined;
  try {
    return await deps.clients.subscriptions.getSubscription({ merchantId, id });
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal.status === 404) return undefined;
    throw err;
  }
}

/**
 * Every action, whatever the status: the status machine decides (a move it
 * forbids is shown as INVALID_STATUS_TRANSITION), so the page never guesses it.
 */
const ACTIONS = [
  { value: "pause", label: "Pause" },
  { value: "resume", label: "Resume" },
  { value: "cancel", label: "Cancel subscription" },
];

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
