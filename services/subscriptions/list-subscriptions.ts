import { raw, type FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { emailKey } from "../platform/email.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { Subscription, type AuthorizationRow, type SubscriptionRow } from "./entities.ts";
import { SUBSCRIPTION_STATUSES } from "./status-machine.ts";
import { currentAuthorizations } from "./subscription-store.ts";

interface ListSubscriptionsInput {
  merchantId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  status?: string | undefined;
  planId?: string | undefined;
  walletUserId?: string | undefined;
  externalReference?: string | undefined;
  /** The dashboard's search: an id, an externalReference or a customer email, matched exactly. */
  query?: string | undefined;
}

const QUERY_MAX = 254;

/**
 * What a search text can be, each an exact match on an index (migration
 * 0033): a uuid is an id (or a reference that looks like one), text with an
 * "@" a customer email (case-insensitive) or a reference, anything else a reference.
 */
function searchFilter(query: string): Record<string, unknown> {
  const text = query.trim();
  if (text.length > QUERY_MAX) throw invalid("INVALID_REQUEST", `query: must be at most ${QUERY_MAX} characters`);
  if (isUuid(text)) return { $or: [{ id: text.toLowerCase() }, { externalReference: text }] };
  if (text.includes("@")) return { $or: [{ [raw("lower(customer_email)")]: emailKey(text) }, { externalReference: text }] };
  return { externalReference: text };
}

/** Newest first, keyset-paginated; each item comes with its current authorization. */
export async function listSubscriptions(
  ctx: UseCaseContext,
  input: ListSubscriptionsInput,
): Promise<Page<SubscriptionRow> & { authorizations: Map<string, AuthorizationRow> }> {
  if (input.status !== undefined && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(input.status)) {
    throw invalid("INVALID_REQUEST", `status: must be one of ${SUBSCRIPTION_STATUSES.join(", ")}`);
  }
  if (input.planId !== undefined && !isUuid(input.planId)) throw invalid("INVALID_REQUEST", "planId: must be a uuid");
  if (input.walletUserId !== undefined && !isUuid(input.walletUserId)) throw invalid("INVALID_REQUEST", "walletUserId: must be a uuid");
  const limit = clampLimit(input.limit);
  const query = input.query?.trim() ? searchFilter(input.query) : undefined;
  const where = {
    $and: [{ merchantId: input.merchantId }, ...(query ? [query] : []), afterCursor(input.cursor)],
    ...(input.status !== undefined && { status: input.status }),
    ...(input.planId !== undefined && { planId: input.planId }),
    ...(input.walletUserId !== undefined && { walletUserId: input.walletUserId }),
    ...(input.externalReference !== undefined && { externalReference: input.externalReference }),
  } as FilterQuery<SubscriptionRow>;
  const rows = await ctx.em.find(Subscription, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  const page = toPage(rows, limit);
  return {
    ...page,
    authorizations: await currentAuthorizations(
      ctx.em,
      page.items.map((s) => s.id),
    ),
  };
}
