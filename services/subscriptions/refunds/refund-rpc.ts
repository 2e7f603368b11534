import type { ServiceImpl } from "@connectrpc/connect";
import type { RefundsService } from "../../../proto/gen/billing/subscriptions/v1/refunds_pb.ts";
import type { ServiceDeps } from "../../platform/service-deps.ts";
import { useCaseContext } from "../../platform/rpc/use-case-context.ts";
import { parseMetadataJson } from "../../platform/metadata.ts";
import { toTimestamp } from "../../platform/timestamps.ts";
import { withRecordJson } from "../../platform/rpc/record-json.ts";
import { subscriptionPorts, type SubscriptionPorts } from "../ports.ts";
import { chargeRecord } from "../subscription-record.ts";
import { chargeMessage } from "../subscription-messages.ts";
import type { RefundRow } from "./refund-entities.ts";
import { refundRecord, type RefundRecord } from "./refund-record.ts";
import { createRefund, registryDecimals, type AssetDecimals } from "./create-refund.ts";
import { getRefund } from "./get-refund.ts";
import { listRefunds } from "./list-refunds.ts";

/** The RPC message: typed fields for internal callers, and the record (refund-record.ts) itself for the edge. */
function refundMessage(r: RefundRecord) {
  return withRecordJson(
    {
      id: r.id,
      chargeId: r.chargeId,
      subscriptionId: r.subscriptionId,
      amount: r.amount,
      currency: r.currency,
      asset: r.asset,
      assetAmount: r.assetAmount,
      status: r.status,
      reason: r.reason ?? undefined,
      metadataJson: JSON.stringify(r.metadata),
      createdAt: toTimestamp(r.createdAt),
    },
    r,
  );
}

const toMessage = (r: RefundRow) => refundMessage(refundRecord(r));

/** Served by the subscriptions service (services/routes.ts): refunds live next to the charges they return. */
export function refundsService(deps: ServiceDeps): ServiceImpl<typeof RefundsService> {
  let cached: { config: ServiceDeps["config"]; ports: SubscriptionPorts } | undefined;
  const ports = () => {
    if (cached?.config !== deps.config) cached = { config: deps.config, ports: subscriptionPorts(deps) };
    return cached.ports;
  };
  // The asset registry is code in the wallet (it changes only with a deploy): asked once per service instance.
  let registry: Promise<Map<string, number>> | undefined;
  const decimals: AssetDecimals = async (code) => {
    registry ??= ports()
      .wallet.listAssets({})
      .then((res) => new Map(res.assets.map((a) => [a.code, a.decimals])));
    registry.catch(() => (registry = undefined));
    return (await registry).get(code) ?? registryDecimals(ports())(code);
  };
  return {
    async createRefund(req, call) {
      const res = await createRefund(
        useCaseContext(call),
        ports(),
        {
          merchantId: req.merchantId,
          chargeId: req.chargeId,
          amount: req.amount,
          reason: req.reason,
          metadata: parseMetadataJson(req.metadataJson),
          idempotencyKey: req.idempotencyKey,
        },
        decimals,
      );
      return { refund: toMessage(res.refund), charge: chargeMessage(chargeRecord(res.charge)) };
    },
    async getRefund(req, call) {
      return { refund: toMessage(await getRefund(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listRefunds(req, call) {
      const page = await listRefunds(useCaseContext(call), {
        merchantId: req.merchantId,
        chargeId: req.chargeId,
        subscriptionId: req.subscriptionId,
        limit: req.limit,
        cursor: req.cursor,
      });
      return { refunds: page.items.map(toMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  };
}
