import { isoFromTimestamp } from "../../services/platform/timestamps.ts";
import { defineRoutes } from "../route.ts";
import { createdApiKeySchema, createdMerchantSchema, createMerchantBody } from "../schemas/merchants.ts";

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
]);
