import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { invalid } from "../../platform/errors.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../../platform/pagination.ts";
import { SubscriptionChangeSession, type ChangeSessionRow } from "./change-session-entities.ts";
import { CHANGE_SESSION_STATUSES } from "./change-session-status-machine.ts";
import { findSubscription } from "../subscription-store.ts";

interface ListChangeSessionsInput {
  merchantId: string;
  subscriptionId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  status?: string | undefined;
}

/** A subscription's change sessions, newest first, keyset-paginated; another merchant's subscription is not found. */
export async function listChangeSessions(ctx: UseCaseContext, input: ListChangeSessionsInput): Promise<Page<ChangeSessionRow>> {
  if (input.status !== undefined && !(CHANGE_SESSION_STATUSES as readonly string[]).includes(input.status)) {
    throw invalid("INVALID_REQUEST", `status: must be one of ${CHANGE_SESSION_STATUSES.join(", ")}`);
  }
  const sub = await findSubscription(ctx.em, input.subscriptionId, input.merchantId);
  const limit = clampLimit(input.limit);
  const where = {
    subscriptionId: sub.id,
    merchantId: input.merchantId,
    ...(input.status !== undefined && { status: input.status }),
    ...afterCursor(input.cursor),
  } as FilterQuery<ChangeSessionRow>;
  const rows = await ctx.em.find(SubscriptionChangeSession, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}
