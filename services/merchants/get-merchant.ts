import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { Merchant, type MerchantRow } from "./entities.ts";

export async function getMerchant(ctx: UseCaseContext, id: string): Promise<MerchantRow> {
  const merchant = isUuid(id) ? await ctx.em.findOne(Merchant, { id }) : null;
  if (!merchant) throw notFound("MERCHANT_NOT_FOUND", `merchant ${id} not found`);
  return merchant;
}
