import type { UseCaseContext } from "../../platform/use-case.ts";
import { notFound } from "../../platform/errors.ts";
import { hashSecret } from "../../platform/secret-hashing.ts";
import { Merchant } from "../entities.ts";
import { Member, type MemberRow } from "./entities.ts";
import { inviteTokenHash } from "./invite-member.ts";
import { checkPassword } from "./password-rules.ts";
import { noteAuditObject } from "../../platform/audit/call-context.ts";

const inviteGone = () => notFound("INVITE_NOT_FOUND", "this invite is unknown, used or expired");

/** The member of an unused, unexpired invite, with its merchant's name. */
export async function getInvite(ctx: UseCaseContext, token: string): Promise<{ member: MemberRow; merchantName: string }> {
  const member = token ? await ctx.em.findOne(Member, { inviteTokenHash: inviteTokenHash(token), status: "INVITED" }) : null;
  if (!member || !member.inviteExpiresAt || member.inviteExpiresAt <= ctx.clock.now()) throw inviteGone();
  const merchant = await ctx.em.findOneOrFail(Merchant, { id: member.merchantId });
  return { member, merchantName: merchant.name };
}

/**
 * Sets the password (hashed as wallet passwords are) and uses the invite up
 * in one conditional update, so two submissions of one invite cannot both
 * succeed. The member stays INVITED until TOTP is enabled.
 */
export async function acceptInvite(ctx: UseCaseContext, input: { token: string; password: string }): Promise<{ member: MemberRow; merchantName: string }> {
  const { member, merchantName } = await getInvite(ctx, input.token);
  // Written with one conditional statement (no unit-of-work event): the audit entry learns its member here.
  noteAuditObject("Member", member);
  checkPassword(input.password, member.email);
  const passwordHash = await hashSecret(input.password);
  const updated = await ctx.em.nativeUpdate(
    Member,
    { id: member.id, inviteTokenHash: inviteTokenHash(input.token), status: "INVITED" },
    { passwordHash, inviteTokenHash: null, inviteExpiresAt: null },
  );
  if (updated !== 1) throw inviteGone();
  return { member: await ctx.em.findOneOrFail(Member, { id: member.id }, { refresh: true }), merchantName };
}
