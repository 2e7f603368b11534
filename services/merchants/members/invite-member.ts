import { createHash, randomBytes, randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict, invalid } from "../../platform/errors.ts";
import { getMerchant } from "../get-merchant.ts";
import { Member, type MemberRow } from "./entities.ts";
import { INVITE_TTL_MS, isMemberRole } from "./contract.ts";
import { memberEmail } from "./member-email.ts";

export const inviteTokenHash = (token: string) => createHash("sha256").update(`member-invite:${token}`).digest("hex");

export function checkRole(role: string): void {
  if (!isMemberRole(role)) throw invalid("INVALID_REQUEST", "role: must be one of OWNER, ADMIN, DEVELOPER, SUPPORT, VIEWER");
}

/**
 * An INVITED member and its invite token (returned once; only its digest is
 * kept). The invite is used up by accept-invite and lapses after 7 days.
 */
export async function inviteMember(
  ctx: UseCaseContext,
  input: { merchantId: string; email: string; role: string },
): Promise<{ member: MemberRow; token: string; merchantName: string }> {
  const email = memberEmail(input.email);
  checkRole(input.role);
  const merchant = await getMerchant(ctx, input.merchantId);
  const token = randomBytes(32).toString("base64url");
  const now = ctx.clock.now();
  try {
    const member = await ctx.em.transactional(async (em) => {
      const taken = await em.count(Member, { email, status: { $ne: "REMOVED" } });
      if (taken > 0) throw conflict("MEMBER_EXISTS", "email: a member with this email already exists");
      return em.create(Member, {
        id: randomUUID(),
        merchantId: merchant.id,
        email,
        role: input.role,
        status: "INVITED",
        passwordHash: null,
        totpSecret: null,
        totpEnabledAt: null,
        totpLastStep: null,
        inviteTokenHash: inviteTokenHash(token),
        inviteExpiresAt: new Date(now.getTime() + INVITE_TTL_MS),
        createdAt: now,
        removedAt: null,
      });
    });
    return { member, token, merchantName: merchant.name };
  } catch (err) {
    // Two invites of one email at once: the unique index decides.
    if (err instanceof UniqueConstraintViolationException) throw conflict("MEMBER_EXISTS", "email: a member with this email already exists");
    throw err;
  }
}
