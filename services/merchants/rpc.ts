import type { ServiceImpl } from "@connectrpc/connect";
import { toTimestamp } from "../platform/timestamps.ts";
import { MerchantService } from "../../proto/gen/billing/merchants/v1/merchants_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
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
    async createMerchant(req, call) {
      const result = await createMerchant(useCaseContext(call), { name: req.name, keyMode });
      return { merchant: toMessage(result.merchant), apiKeyId: result.apiKeyId, apiKey: result.apiKey };
    },
    async getMerchant(req, call) {
      return { merchant: toMessage(await getMerchant(useCaseContext(call), req.id)) };
    },
    async createApiKey(req, call) {
      return createApiKey(useCaseContext(call), { merchantId: req.merchantId, keyMode });
    },
    async revokeApiKey(req, call) {
      await revokeApiKey(useCaseContext(call), { merchantId: req.merchantId, keyId: req.keyId }, announce);
      return {};
    },
    async listApiKeys(req, call) {
      const page = await listApiKeys(useCaseContext(call), { merchantId: req.merchantId, limit: req.limit, cursor: req.cursor });
      const keys = page.items.map((k) => ({
        id: k.id,
        prefix: k.prefix,
        createdAt: toTimestamp(k.createdAt),
        lastUsedAt: k.lastUsedAt ? toTimestamp(k.lastUsedAt) : undefined,
        revokedAt: k.revokedAt ? toTimestamp(k.revokedAt) : undefined,
      }));
      return { keys, hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async authenticateApiKey(req, call) {
      return authenticateApiKey(useCaseContext(call), req.apiKey);
    },
    async setMerchantRateLimit(req, call) {
      const merchant = await setMerchantRateLimit(useCaseContext(call), req.merchantId, {
        rateLimitPerSecond: req.rateLimitPerSecond === 0 ? null : req.rateLimitPerSecond,
        rateLimitBurst: req.rateLimitBurst === 0 ? null : req.rateLimitBurst,
        payoutReviewAbove: req.payoutReviewAbove === "" ? null : req.payoutReviewAbove,
      });
      return { merchant: toMessage(merchant) };
    },
  };
}
