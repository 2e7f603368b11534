import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict } from "../../platform/errors.ts";
import { recordEvent } from "../../events/record-event.ts";
import { OrderRefund, Payout, type OrderRefundRow, type PayoutRow } from "../entities.ts";
import { canonicalPayoutAddress } from "../addresses/payout-address.ts";
import type { PayoutPorts } from "../payout-ports.ts";
import { assetOf, openCall } from "../payout-calls.ts";
import { payoutRecord } from "../payout-records.ts";
import { payoutMachine } from "../payout-status.ts";
import { hashClaimToken, looksLikeClaimToken } from "./claim-token.ts";
import { followPayout } from "./follow-payout.ts";
import { expireClaim } from "./expire-claims.ts";

/** The refund a claim token names, or undefined (never an error: the page answers 404 by itself). */
async function findClaim(ctx: UseCaseContext, token: string): Promise<{ refund: OrderRefundRow; payout: PayoutRow } | undefined> {
  if (!looksLikeClaimToken(token)) return undefined;
  const em = ctx.em.fork();
  const refund = await em.findOne(OrderRefund, { claimTokenHash: hashClaimToken(token) }, { refresh: true });
  if (!refund) return undefined;
  return { refund, payout: await em.findOneOrFail(Payout, { id: refund.payoutId }) };
}

/**
 * The claim page's read: the refund behind the token. A claim past its time
 * is expired on the spot (the money returns), whatever the sweep has done yet.
 */
export async function readClaim(ctx: UseCaseContext, ports: PayoutPorts, token: string) {
  const found = await findClaim(ctx, token);
  if (!found) return undefined;
  if (found.refund.status === "AWAITING_ADDRESS" && found.refund.claimExpiresAt! <= ctx.clock.now()) {
    await expireClaim(ctx, ports, found.refund.id);
    return findClaim(ctx, token);
  }
  return found;
}

const claimExpired = () => conflict("CLAIM_EXPIRED", "this refund claim has expired");
const claimUsed = () => conflict("CLAIM_USED", "this refund was already claimed");

/**
 * The customer gives the address for a refund waiting AWAITING_ADDRESS: the
 * address is checked for the asset's network (400 naming the rule), then,
 * under the payout's lock and its refund's, the payout gets it and becomes
 * PENDING (payout.created, its SUBMIT call opened: the caller schedules the
 * hand-over after commit), the refund PROCESSING. A claim past its time is
 * expired instead (the money returns) and answered CLAIM_EXPIRED.
 */
export async function claimOrderRefund(
  ctx: UseCaseContext,
  ports: PayoutPorts,
  token: string,
  rawAddress: string,
): Promise<{ refund: OrderRefundRow; payout: PayoutRow } | undefined> {
  const found = await readClaim(ctx, ports, token);
  if (!found) return undefined;
  if (found.refund.status === "EXPIRED") throw claimExpired();
  if (found.refund.status !== "AWAITING_ADDRESS") throw claimUsed();
  const asset = await assetOf(ports, found.payout.asset);
  const address = canonicalPayoutAddress(asset.network, rawAddress, ports.addressChain);
  return ctx.em.fork().transactional(async (em) => {
    const payout = await em.findOneOrFail(Payout, { id: found.payout.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const refund = await em.findOneOrFail(OrderRefund, { id: found.refund.id }, { refresh: true });
    if (refund.status === "EXPIRED") throw claimExpired();
    if (payout.status !== "AWAITING_ADDRESS") throw claimUsed();
    if (refund.claimExpiresAt! <= ctx.clock.now()) throw claimExpired();
    const now = ctx.clock.now();
    payout.address = address;
    payout.status = payoutMachine.next(payout.status, "address_given");
    payout.updatedAt = now;
    openCall(em, now, payout, "SUBMIT");
    recordEvent(em, ctx.clock, { merchantId: payout.merchantId, type: "payout.created", data: payoutRecord(payout) });
    const moved = await followPayout(em, ctx.clock, ports.claimLinks, payout, "claimed");
    return { refund: moved!, payout };
  });
}
