import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { characterCount } from "../platform/text.ts";
import { Merchant, type MerchantRow } from "./entities.ts";
import { issueApiKey } from "./create-api-key.ts";

export async function createMerchant(
  ctx: UseCaseContext,
  input: { name: string; keyMode: "test" | "live" },
): Promise<{ merchant: MerchantRow; apiKeyId: string; apiKey: string }> {
  const name = input.name.trim();
  if (!name || characterCount(name) > 200) throw invalid("INVALID_REQUEST", "name: must be 1 to 200 characters");
  return ctx.em.transactional(async (em) => {
    const merchant = em.create(Merchant, { id: randomUUID(), name, createdAt: ctx.clock.now() });
    // Plain uuid foreign keys give the unit of work no insert order: write the parent first.
    await em.flush();
    const key = issueApiKey(em, ctx.clock, merchant.id, input.keyMode);
    return { merchant, apiKeyId: key.id, apiKey: key.apiKey };
  });
}
