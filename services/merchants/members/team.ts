import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { Merchant } from "../entities.ts";
import { Member, type MemberRow } from "./entities.ts";
import { checkRole } from "./invite-member.ts";

const memberNotFound = (id: string) => notFound("MEMBER_NOT_FOUND", `member ${id} not found`);
const lastOwner = () => new DomainError("failed_precondition", "LAST_OWNER", "the last owner cannot be removed or given another role");

/** A live member with its merchant's name (the dashboard reads it on every request: role changes and removals apply at once). */
export async function getMember(ctx: UseCaseContext, memberId: string): Promise<{ member: MemberRow; merchantName: string }> {
  const member = isUuid(memberId) ? await ctx.em.findOne(Member, { id: memberId, status: { $ne: "REMOVED" } }) : null;
  if (!member) throw memberNotFound(memberId);
  const merchant = await ctx.em.findOneOrFail(Merchant, { id: member.merchantId });
  return { member, merchantName: merchant.name };
}

export async function listMembers(ctx: UseCaseContext, merchantId: string): Promise<MemberRow[]> {
  return ctx.em.find(Member, { merchantId, status: { $ne: "REMOVED" } }, { orderBy: { createdAt: "asc", id: "asc" } });
}

/**
 * Role changes and removals of one merchant are serialized on its merchant
 * row, so two owners demoting each other at once cannot leave none.
 */
async function changeTeam(
  ctx: UseCaseContext,
  merchantId: string,
  memberId: string,
  change: (member: MemberRow, otherOwners: number) => void,
): Promise<MemberRow> {
  return ctx.em.transactional(async (em) => {
    await em.findOneOrFail(Merchant, { id: merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // Another merchant's member answers as a missing one.
    const member = isUuid(memberId) ? await em.findOne(Member, { id: memberId, merchantId, status: { $ne: "REMOVED" } }, { refresh: true }) : null;
    if (!member) throw memberNotFound(memberId);
    const otherOwners = await em.count(Member, { merchantId, role: "OWNER", status: "ACTIVE", id: { $ne: member.id } });
    change(member, otherOwners);
    return member;
  });
}

export async function changeMemberRole(ctx: UseCaseContext, input: { merchantId: string; memberId: string; role: string }): Promise<MemberRow> {
  checkRole(input.role);
  return changeTeam(ctx, input.merchantId, input.memberId, (member, otherOwners) => {
    if (member.role === "OWNER" && input.role !== "OWNER" && otherOwners === 0) throw lastOwner();
    member.role = input.role;
  });
}

export async function removeMember(ctx: UseCaseContext, input: { merchantId: string; memberId: string }): Promise<MemberRow> {
  return changeTeam(ctx, input.merchantId, input.memberId, (member, otherOwners) => {
    if (member.role === "OWNER" && otherOwners === 0) throw lastOwner();
    member.status = "REMOVED";
    member.removedAt = ctx.clock.now();
    member.inviteTokenHash = null;
  });
}
