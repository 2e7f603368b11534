import type { Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { GetChangeApprovalResponse, PlanSummary, SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { approvalProvider, redirectOrigins, withResult, type ApprovalProvider, type ApprovalState, type ApprovalView } from "./approval-provider.ts";
import { amountText, every, formatUtc } from "./page-text.ts";

const STATE: Record<string, ApprovalState> = {
  PENDING_APPROVAL: "PENDING",
  EXPIRED: "EXPIRED",
  CANCELLED: "CANCELLED",
  SCHEDULED: "USED",
  APPLIED: "USED",
  DECLINED: "USED",
};

/** The session's successUrl / cancelUrl with subscriptionId, changeSessionId and status added. */
const resultUrl = (target: string, session: { subscriptionId: string; id: string; status: string }) =>
  withResult(target, { subscriptionId: session.subscriptionId, changeSessionId: session.id, status: session.status });

const isZeroAmount = (amount: string) => /^0+(\.0+)?$/.test(amount);
const planLine = (plan: PlanSummary) => `${plan.name} · ${amountText(plan.amount, plan.currency)} / ${every(plan.interval, plan.intervalCount)}`;

function toView(res: GetChangeApprovalResponse): ApprovalView {
  const session = res.changeSession!;
  const current = res.currentPlan!;
  const requested = res.requestedPlan!;
  const period = every(requested.interval, requested.intervalCount);
  const price = amountText(requested.amount, requested.currency);
  const charge = session.effectiveMode === "IMMEDIATE" ? session.immediateChargeAmount : "0";
  const due = amountText(charge, session.currency);
  const immediate = session.effectiveMode === "IMMEDIATE";
  const nextBilling = res.nextBillingAt ? formatUtc(timestampDate(res.nextBillingAt)) : undefined;
  const lines = [
    { label: "Current plan", value: planLine(current) },
    { label: "New plan", value: planLine(requested) },
    { label: "Takes effect", value: immediate ? "Now" : nextBilling ? `At your next billing, ${nextBilling}` : "At your next billing" },
    { label: "Due today", value: due },
    { label: "Paid from", value: res.fundingAsset },
  ];
  if (requested.maximumChargeAmount !== undefined)
    lines.push({ label: "Maximum per charge", value: amountText(requested.maximumChargeAmount, requested.currency) });
  if (session.reason) lines.push({ label: "Reason", value: session.reason });
  const note = immediate
    ? `${res.merchantName} switches your subscription to ${requested.name} now${isZeroAmount(charge) ? "" : ` and charges ${due} today`}. ` +
      `Your next billing date stays; from then on ${price} is charged every ${period}.`
    : `Nothing is charged today and ${current.name} stays until your next billing. From then on ${price} is charged every ${period} instead of ${amountText(current.amount, current.currency)}.`;
  return {
    state: STATE[res.status] ?? "USED",
    walletUserId: res.walletUserId,
    expiresAt: timestampDate(session.expiresAt!),
    redirectOrigins: redirectOrigins(session.successUrl, session.cancelUrl),
    fixedFunding: true,
    // The one choice's amountDue is the immediate charge (zero for NEXT_BILLING).
    dueNow: true,
    summary: {
      title: `Change your plan to ${requested.name}`,
      merchantName: res.merchantName,
      price: `${price} / ${period}`,
      lines,
      note,
      approveLabel: isZeroAmount(charge) ? "Approve the change" : `Approve and pay ${due}`,
    },
  };
}

/** A plan change session as an approval: the hosted page at /change/<token>, same flow and rules as /authorize. */
export function changeApproval(client: Client<typeof SubscriptionsService>): ApprovalProvider {
  return approvalProvider({
    fetch: (token) => client.getChangeApproval({ token }),
    view: toView,
    fundingOptions: (token, walletUserId) => client.listChangeFundingOptions({ token, walletUserId }),
    // The subscription's funding asset pays: the posted fundingAsset is only the page's display of it.
    async approve(token, walletUserId) {
      const res = await client.approveChangeSession({ token, walletUserId });
      if (res.approved) return { approved: true, redirectUrl: resultUrl(res.changeSession!.successUrl, res.changeSession!) };
      return { approved: false, reason: res.refusalReason || "REFUSED", message: res.message };
    },
    async decline(token) {
      const { changeSession } = await client.declineChangeSession({ token });
      return { redirectUrl: resultUrl(changeSession!.cancelUrl, changeSession!) };
    },
  });
}
