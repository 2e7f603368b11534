import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** A merchant's team member (migration 0028). Secrets: see members.proto. */
export const Member = defineEntity({
  name: "Member",
  tableName: "members",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    email: p.string().length(254),
    role: p.string().length(16),
    status: p.string().length(16),
    passwordHash: p.text().nullable(),
    /** AES-256-GCM under SECRETS_KEY, bound to the member id (sealed-secret.ts). */
    totpSecret: p.text().nullable(),
    totpEnabledAt: p.datetime().nullable(),
    /** The last time-step (unix seconds / 30) whose code was accepted: that code and older ones are refused. */
    totpLastStep: p.bigint("number").nullable(),
    inviteTokenHash: p.string().length(64).nullable(),
    inviteExpiresAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    removedAt: p.datetime().nullable(),
  },
});

export const MemberRecoveryCode = defineEntity({
  name: "MemberRecoveryCode",
  tableName: "member_recovery_codes",
  properties: {
    memberId: p.uuid().primary(),
    codeHash: p.string().length(64).primary(),
    usedAt: p.datetime().nullable(),
  },
});

export type MemberRow = InferEntity<typeof Member>;
export const memberEntities = [Member, MemberRecoveryCode];
