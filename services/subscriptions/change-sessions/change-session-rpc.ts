import type { ServiceImpl } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useCaseContext } from "../../platform/rpc/use-case-context.ts";
import { parseMetadataJson } from "../../platform/metadata.ts";
import { formatAmount } from "../../platform/money.ts";
import { toOptionalTimestamp, toTimestamp } from "../../platform/timestamps.ts";
import { withRecordJson } from "../../platform/rpc/record-json.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionRecord, type ChangeSessionRecord } from "./change-session-record.ts";
import { chargeRecord, subscriptionRecord } from "../subscription-record.ts";
import { currentAuthorization } from "../subscription-store.ts";
import { openApprovalUrl } from "./change-session-store.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { createChangeSession } from "./create-change-session.ts";
import { getChangeSession } from "./get-change-session.ts";
import { listChangeSessions } from "./list-change-sessions.ts";
import { getChangeApproval, listChangeFundingOptions } from "./get-change-approval.ts";
import { approveChangeSession } from "./approve-change-session.ts";
import { declineChangeSession } from "./decline-change-session.ts";
import { cancelChangeSession } from "./cancel-change-session.ts";
import { chargeMessage, planSummary, subscriptionMessage } from "../subscription-messages.ts";

/** The typed RPC fields are the record (change-session-record.ts) field by field: REST and events share one shape. */
function changeSessionMessage(merchantId: string, r: ChangeSessionRecord) {
  return {
    id: r.id,
    merchantId,
    subscriptionId: r.subscriptionId,
    status: r.status,
    currentPlanId: r.currentPlanId,
    requestedPlanId: r.requestedPlanId,
    effectiveMode: r.effectiveMode,
    immediateChargeAmount: r.immediateChargeAmount,
    currency: r.currency,
    successUrl: r.successUrl,
    cancelUrl: r.cancelUrl,
    reason: r.reason ?? undefined,
    metadataJson: JSON.stringify(r.metadata),
    expiresAt: toTimestamp(r.expiresAt),
    scheduledFor: toOptionalTimestamp(r.scheduledFor),
    cancellationReason: r.cancellationReason ?? undefined,
    supersededBy: r.supersededBy ?? undefined,
    chargeId: r.chargeId ?? undefined,
    createdAt: toTimestamp(r.createdAt),
    updatedAt: toTimestamp(r.updatedAt),
    approvedAt: toOptionalTimestamp(r.approvedAt),
    appliedAt: toOptionalTimestamp(r.appliedAt),
    declinedAt: toOptionalTimestamp(r.declinedAt),
    expiredAt: toOptionalTimestamp(r.expiredAt),
    cancelledAt: toOptionalTimestamp(r.cancelledAt),
  };
}

/**
 * The merchant's view: the record plus, while it is open, the approval URL
 * (merchant reads only; not in event data). record_json carries exactly this
 * view, the REST body.
 */
function toMessage(ports: SubscriptionPorts, s: ChangeSessionRow) {
  const approvalUrl = openApprovalUrl(ports.publicBaseUrl, ports.linkKey, s);
  const record = changeSessionRecord(s);
  return withRecordJson({ ...changeSessionMessage(s.merchantId, record), approvalUrl }, { ...record, approvalUrl: approvalUrl ?? null });
}

type ChangeSessionMethods = Pick<
  ServiceImpl<typeof SubscriptionsService>,
  | "createChangeSession"
  | "getChangeSession"
  | "listChangeSessions"
  | "getChangeApproval"
  | "listChangeFundingOptions"
  | "approveChangeSession"
  | "declineChangeSession"
  | "cancelChangeSession"
>;

/** The change-session procedures of SubscriptionsService (rpc.ts mounts them with the others). */
export function changeSessionMethods(ports: () => SubscriptionPorts): ChangeSessionMethods {
  return {
    async createChangeSession(req, call) {
      const created = await createChangeSession(useCaseContext(call), ports(), {
        merchantId: req.merchantId,
        subscriptionId: req.subscriptionId,
        requestedPlanId: req.requestedPlanId,
        effectiveMode: req.effectiveMode,
        immediateChargeAmount: req.immediateChargeAmount,
        proration: req.proration,
        successUrl: req.successUrl,
        cancelUrl: req.cancelUrl,
        reason: req.reason,
        metadata: parseMetadataJson(req.metadataJson),
      });
      return { changeSession: toMessage(ports(), created.session), approvalUrl: created.approvalUrl };
    },
    async cancelChangeSession(req, call) {
      const session = await cancelChangeSession(useCaseContext(call), { merchantId: req.merchantId, subscriptionId: req.subscriptionId, sessionId: req.id });
      return { changeSession: toMessage(ports(), session) };
    },
    async getChangeSession(req, call) {
      return { changeSession: toMessage(ports(), await getChangeSession(useCaseContext(call), req.merchantId, req.subscriptionId, req.id)) };
    },
    async listChangeSessions(req, call) {
      const page = await listChangeSessions(useCaseContext(call), {
        merchantId: req.merchantId,
        subscriptionId: req.subscriptionId,
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
      });
      const p = ports();
      return { changeSessions: page.items.map((s) => toMessage(p, s)), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getChangeApproval(req, call) {
      const view = await getChangeApproval(useCaseContext(call), ports(), req.token);
      return {
        changeSession: toMessage(ports(), view.session),
        status: view.status,
        subscriptionStatus: view.subscription.status,
        merchantName: view.merchantName,
        walletUserId: view.subscription.walletUserId,
        currentPlan: planSummary(view.currentPlan),
        requestedPlan: planSummary(view.requestedPlan),
        fundingAsset: view.subscription.fundingAsset ?? "",
        nextBillingAt: toOptionalTimestamp(view.subscription.nextBillingAt),
      };
    },
    async listChangeFundingOptions(req, call) {
      const options = await listChangeFundingOptions(useCaseContext(call), ports(), { token: req.token, walletUserId: req.walletUserId });
      return {
        options: options.map((o) => ({
          ...o,
          balance: formatAmount(o.balance),
          amountDue: formatAmount(o.amountDue),
          rate: o.rate ? formatAmount(o.rate) : "",
        })),
      };
    },
    async approveChangeSession(req, call) {
      const ctx = useCaseContext(call);
      const result = await approveChangeSession(ctx, ports(), { token: req.token, walletUserId: req.walletUserId });
      const authorization = await currentAuthorization(ctx.em.fork(), result.subscription.id);
      return {
        approved: result.approved,
        refusalReason: result.refusal ?? "",
        message: result.message,
        changeSession: toMessage(ports(), result.session),
        subscription: subscriptionMessage(result.subscription.merchantId, subscriptionRecord(result.subscription, authorization)),
        charge: result.charge ? chargeMessage(chargeRecord(result.charge)) : undefined,
      };
    },
    async declineChangeSession(req, call) {
      return { changeSession: toMessage(ports(), await declineChangeSession(useCaseContext(call), req.token)) };
    },
  };
}
