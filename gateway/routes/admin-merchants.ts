import { isoFromTimestamp } from "../../services/platform/timestamps.ts";
import { defineRoutes } from "../route.ts";
import {
  createdApiKeySchema,
  createdMerchantSchema,
  createMerchantBody,
  invitedMemberSchema,
  inviteMemberBody,
  merchantSchema,
  updateMerchantBody,
} from "../schemas/merchants.ts";
import { inviteUrlOf } from "../pages/dashboard/paths.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

export const adminMerchantRoutes = defineRoutes([
  {
    method: "post",
    path: "/admin/v1/merchants",
    operationId: "adminCreateMerchant",
    summary: "Create a merchant and its first API key",
    tag: "Operator",
    auth: "admin",
    body: createMerchantBody,
    responses: { 201: { description: "The merchant with its API key (shown once)", schema: createdMerchantSchema } },
    async handler({ body }, { clients }) {
      const res = await clients.merchants.createMerchant({ name: body.name });
      return {
        status: 201,
        body: {
          id: res.merchant!.id,
          name: res.merchant!.name,
          apiKey: res.apiKey,
          apiKeyId: res.apiKeyId,
          createdAt: isoFromTimestamp(res.merchant!.createdAt!),
        },
      };
    },
  },
  {
    method: "patch",
    path: "/admin/v1/merchants/:id",
    operationId: "adminUpdateMerchant",
    summary: "Set a merchant's own rate limit, payout review threshold or receipt prefix",
    description:
      "`rateLimitPerSecond` (refill) and `rateLimitBurst` (bucket size) of the merchant's /api/v1 token bucket, each 1–100000; `null` = back to the default (RATE_LIMIT_PER_SECOND / RATE_LIMIT_BURST); a field left out stays as it is. Applies within seconds on every gateway. " +
      "`payoutReviewAbove` (USD, decimal string, or null for none): payouts worth more wait IN_REVIEW for an operator.",
    tag: "Operator",
    auth: "admin",
    body: updateMerchantBody,
    errors: [404, 409],
    responses: { 200: { description: "The merchant with its limits", schema: merchantSchema } },
    async handler({ body, params }, { clients, rateLimiter }) {
      // Receipts (issue 25): set first, so a refused prefix (409 RECEIPT_PREFIX_LOCKED) changes nothing else.
      const receipt =
        body.receiptPrefix === undefined ? undefined : await clients.pricing.setReceiptPrefix({ merchantId: params.id!, prefix: body.receiptPrefix });
      const field = (v: number | null | undefined) => (v === undefined ? undefined : (v ?? 0));
      const res = await clients.merchants.setMerchantRateLimit({
        merchantId: params.id!,
        rateLimitPerSecond: field(body.rateLimitPerSecond),
        rateLimitBurst: field(body.rateLimitBurst),
        payoutReviewAbove: body.payoutReviewAbove === undefined ? undefined : (body.payoutReviewAbove ?? ""),
      });
      rateLimiter?.forget(params.id!);
      return { status: 200, body: { ...recordOf(res.merchant), ...(receipt && { receiptPrefix: receipt.prefix }) } };
    },
  },
  {
    method: "post",
    path: "/admin/v1/merchants/:id/api-keys",
    operationId: "adminCreateApiKey",
    summary: "Create another API key for a merchant",
    tag: "Operator",
    auth: "admin",
    errors: [404],
    responses: { 201: { description: "The key (shown once)", schema: createdApiKeySchema } },
    async handler({ params }, { clients }) {
      const res = await clients.merchants.createApiKey({ merchantId: params.id! });
      return { status: 201, body: { id: res.id, apiKey: res.apiKey } };
    },
  },
  {
    method: "delete",
    path: "/admin/v1/merchants/:id/api-keys/:keyId",
    operationId: "adminRevokeApiKey",
    summary: "Revoke an API key; it answers 401 from then on",
    tag: "Operator",
    auth: "admin",
    errors: [404],
    responses: { 204: { description: "Revoked" } },
    async handler({ params }, { clients }) {
      await clients.merchants.revokeApiKey({ merchantId: params.id!, keyId: params.keyId! });
      return { status: 204 };
    },
  },
  {
    method: "post",
    path: "/admin/v1/merchants/:id/members",
    operationId: "adminInviteMember",
    summary: "Invite a team member to the merchant dashboard",
    description:
      "The operator invites a merchant's first member (usually an OWNER); members with OWNER or ADMIN invite more from the dashboard's Team page. " +
      "The `inviteUrl` is single use and valid 7 days: it sets a password (12 characters or more, not a common one) and enrols TOTP two-factor authentication.",
    tag: "Operator",
    auth: "admin",
    body: inviteMemberBody,
    errors: [404, 409],
    responses: { 201: { description: "The invited member with its invite link (shown once)", schema: invitedMemberSchema } },
    async handler({ body, params }, { clients, config }) {
      const res = await clients.members.inviteMember({ merchantId: params.id!, email: body.email, role: body.role });
      return { status: 201, body: { ...recordOf(res.member), inviteUrl: inviteUrlOf(config.publicBaseUrl, res.inviteToken) } };
    },
  },
]);
