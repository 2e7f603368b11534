import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { openSecret } from "../../platform/sealed-secret.ts";
import { burnVerifyTime, verifySecret } from "../../platform/secret-hashing.ts";
import { Member, MemberRecoveryCode, type MemberRow } from "./entities.ts";
import { memberEmail } from "./member-email.ts";
import { recoveryCodeHash, totpContext } from "./enrol-totp.ts";
import { matchingStep } from "./totp.ts";
import { recordAuditEntry } from "../../platform/audit/audit-writer.ts";

const refused = () => new DomainError("unauthenticated", "INVALID_CREDENTIALS", "the email or password is incorrect");

/**
 * The password step of the dashboard login. An unknown email costs the same
 * time as a wrong password (no enumeration by timing). Tries are limited per
 * email and per client address by the gateway's login limiter.
 */
export async function verifyMemberPassword(ctx: UseCaseContext, input: { email: string; password: string }): Promise<MemberRow> {
  const email = emailOrUndefined(input.email);
  const member = email !== undefined ? await ctx.em.findOne(Member, { email, status: { $ne: "REMOVED" } }) : null;
  if (!member?.passwordHash) {
    await burnVerifyTime(input.password);
    throw refused();
  }
  if (!(await verifySecret(member.passwordHash, input.password))) {
    // A known member's failed login is theirs to see (an unknown email belongs to no merchant: the limiter and access log keep it).
    await recordAuditEntry(ctx.em, failure(member, "member.login_failed"));
    throw refused();
  }
  return member;
}

/** Not an email at all is answered like an unknown one: the login form never says which of the two was wrong. */
function emailOrUndefined(raw: string): string | undefined {
  try {
    return memberEmail(raw);
  } catch {
    return undefined;
  }
}

type CodeCheck = { ok: false } | { ok: true; recoveryCodeUsed: boolean; recoveryCodesLeft: number };

/**
 * A second factor: a TOTP code of a step later than the last one accepted
 * (so a code, even observed, works once), or an unused recovery code (used up
 * now). The member row is locked so two requests with one code cannot both pass.
 */
export async function verifyMemberCode(ctx: UseCaseContext, key: Buffer, input: { memberId: string; code: string }): Promise<CodeCheck> {
  return ctx.em.transactional(async (em) => {
    const member = isUuid(input.memberId)
      ? await em.findOne(Member, { id: input.memberId, status: "ACTIVE" }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
      : null;
    if (!member?.totpSecret || !member.totpEnabledAt) throw notFound("MEMBER_NOT_FOUND", `member ${input.memberId} not found`);
    const code = input.code.trim();
    if (/^\d{6}$/.test(code)) {
      const step = matchingStep(openSecret(key, totpContext(member.id), member.totpSecret), code);
      if (step === undefined || (member.totpLastStep != null && step <= member.totpLastStep)) return codeRefused(em, member);
      member.totpLastStep = step;
      return { ok: true, recoveryCodeUsed: false, recoveryCodesLeft: await unused(em, member.id) };
    }
    if (code.length > 40) return codeRefused(em, member);
    const used = await em.nativeUpdate(
      MemberRecoveryCode,
      { memberId: member.id, codeHash: recoveryCodeHash(code), usedAt: null },
      { usedAt: ctx.clock.now() },
    );
    if (used !== 1) return codeRefused(em, member);
    return { ok: true, recoveryCodeUsed: true, recoveryCodesLeft: await unused(em, member.id) };
  });
}

/** A wrong, reused or unknown code (at login or confirming a sensitive action): recorded, then refused. */
async function codeRefused(em: UseCaseContext["em"], member: MemberRow): Promise<CodeCheck> {
  await recordAuditEntry(em, failure(member, "member.totp_failed"));
  return { ok: false };
}

const failure = (member: MemberRow, action: string) => ({
  merchantId: member.merchantId,
  actor: { type: "member" as const, id: member.id, label: member.email },
  action,
  objectType: "member",
  objectId: member.id,
});

const unused = (em: UseCaseContext["em"], memberId: string) => em.count(MemberRecoveryCode, { memberId, usedAt: null });
