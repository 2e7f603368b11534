import { formatAmount } from "../../platform/money.ts";
import type { FilterQuery } from "@mikro-orm/core";
import type { Plan } from "../../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { afterCursor, clampLimit, decodeCursor, encodeCursor, KEYSET_ORDER } from "../../platform/pagination.ts";
import { Subscription, SubscriptionCharge, type AuthorizationRow, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { TERMINAL_STATUSES } from "../status-machine.ts";
import { FUNDING_CHANGEABLE_STATUSES } from "../contract.ts";
import { currentAuthorizations } from "../subscription-store.ts";
import { fetchMerchantName, fetchPlan, type SubscriptionPorts } from "../ports.ts";
import { fundingOptionsFrom, walletHoldings, type FundingOption, type WalletHoldings } from "../list-funding-options.ts";
import { newestChargeIds } from "./customer-subscription-store.ts";

/** Charges shown per subscription (the newest); the merchant's API has them all. */
const CUSTOMER_CHARGES_SHOWN = 24;

interface CustomerSubscription {
  subscription: SubscriptionRow;
  authorization: AuthorizationRow | null;
  merchantName: string;
  plan: Plan;
  charges: ChargeRow[];
  fundingOptions: FundingOption[];
  live: boolean;
  /** Its next charge is at risk (subscription.charge_at_risk recorded for that period and no balance has covered it since). */
  atRisk: boolean;
  /** What the funding asset lacks, in it, while at risk. */
  shortfall: string | null;
}

interface CustomerSubscriptionPage {
  items: CustomerSubscription[];
  hasMore: boolean;
  nextCursor: string | undefined;
}

type Group = "live" | "ended";

/** The cursor names the group (live ones come first) and the keyset position in it. */
const encode = (group: Group, row: SubscriptionRow) => `${group === "live" ? "L" : "E"}.${encodeCursor(row)}`;
function decode(cursor: string | undefined): { group: Group; cursor?: string } {
  if (!cursor) return { group: "live" };
  const [tag, key] = [cursor.slice(0, 2), cursor.slice(2)];
  if ((tag !== "L." && tag !== "E.") || !key) throw invalid("INVALID_REQUEST", "cursor: is not a cursor returned by this list");
  decodeCursor(key);
  return { group: tag === "L." ? "live" : "ended", cursor: key };
}

/**
 * Every subscription of one wallet user, across merchants: live ones first,
 * then ended ones (CANCELLED, EXPIRED), newest first within each, with the
 * merchant's name, the plan, the latest charges and, for live ones, the
 * accounts that can pay it. Only this wallet user's rows are ever read.
 */
export async function listCustomerSubscriptions(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { walletUserId: string; limit?: number | undefined; cursor?: string | undefined },
): Promise<CustomerSubscriptionPage> {
  if (!isUuid(input.walletUserId)) throw invalid("INVALID_REQUEST", "walletUserId: must be a UUID");
  const limit = clampLimit(input.limit);
  const start = decode(input.cursor);
  const find = (group: Group, cursor: string | undefined, take: number) =>
    ctx.em.find(
      Subscription,
      {
        walletUserId: input.walletUserId,
        status: group === "live" ? { $nin: [...TERMINAL_STATUSES] } : { $in: [...TERMINAL_STATUSES] },
        ...afterCursor(cursor),
      } as FilterQuery<SubscriptionRow>,
      { orderBy: KEYSET_ORDER, limit: take },
    );

  const rows: { group: Group; row: SubscriptionRow }[] = [];
  let hasMore = false;
  if (start.group === "live") {
    const live = await find("live", start.cursor, limit + 1);
    rows.push(...live.slice(0, limit).map((row) => ({ group: "live" as const, row })));
    hasMore = live.length > limit;
  }
  if (!hasMore) {
    const room = limit - rows.length;
    if (room > 0) {
      const ended = await find("ended", start.group === "ended" ? start.cursor : undefined, room + 1);
      rows.push(...ended.slice(0, room).map((row) => ({ group: "ended" as const, row })));
      hasMore = ended.length > room;
    } else {
      // The live ones filled the page exactly: the next page starts with the ended ones, if any.
      hasMore = (await find("ended", undefined, 1)).length > 0;
    }
  }
  const last = rows.at(-1);
  const authorizations = await currentAuthorizations(
    ctx.em,
    rows.map((r) => r.row.id),
  );
  // Each merchant, plan, the customer's accounts and each plan's options are fetched once per page.
  const names = new Map<string, Promise<string>>();
  const plans = new Map<string, Promise<Plan>>();
  const options = new Map<string, Promise<FundingOption[]>>();
  let holdings: Promise<WalletHoldings> | undefined;
  // Started together; a failure surfaces where the loop awaits it (the no-op catch only keeps the others from
  // counting as unhandled when an earlier one throws first).
  for (const { row } of rows) {
    if (!names.has(row.merchantId)) names.set(row.merchantId, settleLater(fetchMerchantName(ports, row.merchantId)));
    if (!plans.has(row.planId)) plans.set(row.planId, settleLater(fetchPlan(ports, row.merchantId, row.planId)));
  }
  const chargesOf = await newestCharges(
    ctx,
    rows.map((r) => r.row.id),
  );
  const items: CustomerSubscription[] = [];
  for (const { group, row } of rows) {
    const plan = await plans.get(row.planId)!;
    const changeable = (FUNDING_CHANGEABLE_STATUSES as readonly string[]).includes(row.status);
    if (changeable && !options.has(plan.id)) {
      holdings ??= walletHoldings(ports, input.walletUserId);
      options.set(
        plan.id,
        holdings.then((h) => fundingOptionsFrom(ports, plan, h)),
      );
    }
    const charges = chargesOf.get(row.id) ?? [];
    items.push({
      subscription: row,
      authorization: authorizations.get(row.id) ?? null,
      merchantName: await names.get(row.merchantId)!,
      plan,
      charges,
      fundingOptions: changeable ? await options.get(plan.id)! : [],
      live: group === "live",
      ...atRiskOf(row),
    });
  }
  return { items, hasMore, nextCursor: hasMore && last ? encode(last.group, last.row) : undefined };
}

/** The newest CUSTOMER_CHARGES_SHOWN charges of each subscription of the page, in two statements (not one per subscription). */
async function newestCharges(ctx: UseCaseContext, subscriptionIds: readonly string[]): Promise<Map<string, ChargeRow[]>> {
  const byId = new Map<string, ChargeRow[]>();
  if (subscriptionIds.length === 0) return byId;
  const ids = await newestChargeIds(ctx.em, subscriptionIds, CUSTOMER_CHARGES_SHOWN);
  const charges = await ctx.em.find(SubscriptionCharge, { id: { $in: ids } }, { orderBy: KEYSET_ORDER });
  for (const c of charges) {
    const list = byId.get(c.subscriptionId) ?? [];
    list.push(c);
    byId.set(c.subscriptionId, list);
  }
  return byId;
}

function settleLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

/** The period announced at risk is still the next one to charge and nothing has covered it since. */
function atRiskOf(row: SubscriptionRow): { atRisk: boolean; shortfall: string | null } {
  const atRisk = (row.status === "ACTIVE" || row.status === "TRIALING") && row.atRiskPeriodIndex === row.nextPeriodIndex && row.atRiskShortfall != null;
  return { atRisk, shortfall: atRisk ? formatAmount(row.atRiskShortfall!) : null };
}
