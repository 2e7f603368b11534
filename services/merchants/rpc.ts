import type { ServiceImpl } from "@connectrpc/connect";
import { toTimestamp } from "../platform/timestamps.ts";
import { MerchantService } from "../../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { contextFor, type ServiceDeps } from "../platform/service-deps.ts";
import type { MerchantRow } from "./entities.ts";
import { createMerchant } from "./create-merchant.ts";
import { getMerchant } from "./get-merchant.ts";
import { createApiKey } from "./create-api-key.ts";
import { revokeApiKey } from "./revoke-api-key.ts";
import { listApiKeys } from "./list-api-keys.ts";
import { authenticateApiKey } from "./authenticate-api-key.ts";
import { announceVia } from "./key-revocations.ts";
import { setMerchantRateLimit } from "./set-merchant-rate-limit.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import { merchantRecord } from "./merchant-record.ts";
import { formatAmount } from "../platform/money.ts";

const toMessage = (m: MerchantRow) =>
  withRecordJson(
    {
      id: m.id,
      name: m.name,
      createdAt: toTimestamp(m.createdAt),
      rateLimitPerSecond: m.rateLimitPerSecond ?? undefined,
      rateLimitBurst: m.rateLimitBurst ?? undefined,
      payoutReviewAbove: m.payoutReviewAbove == null ? undefined : formatAmount(m.payoutReviewAbove),
    },
    merchantRecord(m),
  );

export function merchantService(deps: ServiceDeps): ServiceImpl<typeof MerchantService> {
  const keyMode = deps.config.apiKeyMode;
  const announce = announceVia(deps.queues.connection, deps.config.queuePrefix);
  return {
    async createMerchant(req) {
      const result = await createMerchant(contextFor(deps), { name: req.name, keyMode });
      return { merchant: toMessage(result.merchant), apiKeyId: result.apiKeyId, apiKey: result.apiKey };
    },
    async getMerchant(req) {
      return { merchant: toMessage(await getMerchant(contextFor(deps), req.id)) };
    },
    async createApiKey(req) {
      return createApiKey(contextFor(deps), { merchantId: req.merchantId, keyMode });
    },
    async revokeApiKey(req) {
      await revokeApiKey(contextFor(deps), { merchantId: req.merchantId, keyId: req.keyId }, announce);
      return {};
    },
    async listApiKeys(req) {
      const page = await listApiKeys(contextFor(deps), { merchantId: req.merchantId, limit: req.limit, cursor: req.cursor });
      const keys = page.items.map((k) => ({
        id: k.id,
        prefix: k.prefix,
        createdAt: toTimestamp(k.createdAt),
        lastUsedAt: k.lastUsedAt ? toTimestamp(k.lastUsedAt) : undefined,
        revokedAt: k.revokedAt ? toTimestamp(k.revokedAt) : undefined,
      }));
      return { keys, hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async authenticateApiKey(req) {
      return authenticateApiKey(contextFor(deps), req.apiKey);
    },
    async setMerchantRateLimit(req) {
      const merchant = await setMerchantRateLimit(contextFor(deps), req.merchantId, {
        rateLimitPerSecond: req.rateLimitPerSecond === 0 ? null : req.rateLimitPerSecond,
        rateLimitBurst: req.rateLimitBurst === 0 ? null : req.rateLimitBurst,
        payoutReviewAbove: req.payoutReviewAbove === "" ? null : req.payoutReviewAbove,
      });
      return { merchant: toMessage(merchant) };
    },
  };
}
