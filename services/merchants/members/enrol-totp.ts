import { createHash, randomBytes } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError, invalid, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { openSecret, sealSecret } from "../../platform/sealed-secret.ts";
import { Member, MemberRecoveryCode, type MemberRow } from "./entities.ts";
import { RECOVERY_CODE_COUNT } from "./contract.ts";
import { matchingStep, newTotpSecret, totpUri } from "./totp.ts";

export const totpContext = (memberId: string) => `member-totp:${memberId}`;
export const recoveryCodeHash = (code: string) =>
  createHash("sha256")
    .update(`member-recovery:${code.replace(/[^A-Z2-7]/gi, "").toUpperCase()}`)
    .digest("hex");

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** 80 random bits as four groups of four base32 characters (like API keys, high entropy: a SHA-256 digest suffices). */
function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => BASE32[b % 32]).join("");
  return chars.match(/.{4}/g)!.join("-");
}

async function pendingMember(ctx: UseCaseContext, memberId: string, lock = false): Promise<MemberRow> {
  const member = isUuid(memberId)
    ? await ctx.em.findOne(Member, { id: memberId, status: "INVITED" }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {})
    : null;
  if (!member || !member.passwordHash) throw notFound("MEMBER_NOT_FOUND", `member ${memberId} not found`);
  if (member.totpEnabledAt) throw new DomainError("failed_precondition", "TOTP_ALREADY_ENABLED", "two-factor authentication is already enabled");
  return member;
}

/** The secret to show on the enrolment page; made (and stored encrypted) on the first call. */
export async function getTotpEnrolment(ctx: UseCaseContext, key: Buffer, memberId: string): Promise<{ secret: string; uri: string }> {
  return ctx.em.transactional(async (em) => {
    const member = await pendingMember({ ...ctx, em }, memberId, true);
    let secret: string;
    if (member.totpSecret) secret = openSecret(key, totpContext(member.id), member.totpSecret);
    else {
      secret = newTotpSecret();
      member.totpSecret = sealSecret(key, totpContext(member.id), secret);
    }
    return { secret, uri: totpUri(secret, member.email) };
  });
}

/**
 * A right code finishes enrolment: the member becomes ACTIVE, the code's
 * step is spent, and 10 recovery codes are made (returned only here, stored
 * as digests).
 */
export async function enableTotp(
  ctx: UseCaseContext,
  key: Buffer,
  input: { memberId: string; code: string },
): Promise<{ member: MemberRow; recoveryCodes: string[] }> {
  return ctx.em.transactional(async (em) => {
    const member = await pendingMember({ ...ctx, em }, input.memberId, true);
    if (!member.totpSecret) throw invalid("TOTP_CODE_INVALID", "code: start the enrolment first");
    const step = matchingStep(openSecret(key, totpContext(member.id), member.totpSecret), input.code.trim());
    if (step === undefined) throw invalid("TOTP_CODE_INVALID", "code: this code is not right; enter the current code from your app");
    member.totpLastStep = step;
    member.totpEnabledAt = ctx.clock.now();
    member.status = "ACTIVE";
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    for (const code of recoveryCodes) em.create(MemberRecoveryCode, { memberId: member.id, codeHash: recoveryCodeHash(code), usedAt: null });
    return { member, recoveryCodes };
  });
}
