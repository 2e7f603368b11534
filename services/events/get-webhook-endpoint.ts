import type { EntityManager } from "@mikro-orm/postgresql";
import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { WebhookEndpoint, type WebhookEndpointRow } from "./webhook-entities.ts";

/** Another merchant's endpoint, and a deleted one, are indistinguishable from a missing one. */
export async function findWebhookEndpoint(em: EntityManager, merchantId: string, id: string, options: { lock?: boolean } = {}): Promise<WebhookEndpointRow> {
  const endpoint = isUuid(id)
    ? await em.findOne(WebhookEndpoint, { id, merchantId, status: { $ne: "DELETED" } }, options.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {})
    : null;
  if (!endpoint) throw notFound("WEBHOOK_ENDPOINT_NOT_FOUND", `webhook endpoint ${id} not found`);
  return endpoint;
}

export function getWebhookEndpoint(ctx: UseCaseContext, merchantId: string, id: string): Promise<WebhookEndpointRow> {
  return findWebhookEndpoint(ctx.em, merchantId, id);
}
