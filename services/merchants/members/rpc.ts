import type { ServiceImpl } from "@connectrpc/connect";
import { MembersService } from "../../../proto/gen/billing/merchants/v1/members_pb.ts";
import { contextFor, type ServiceDeps } from "../../platform/service-deps.ts";
import { memberMessage } from "./member-record.ts";
import { inviteMember } from "./invite-member.ts";
import { acceptInvite, getInvite } from "./accept-invite.ts";
import { enableTotp, getTotpEnrolment } from "./enrol-totp.ts";
import { verifyMemberCode, verifyMemberPassword } from "./verify-member.ts";
import { changeMemberRole, getMember, listMembers, removeMember } from "./team.ts";

/** The members RPCs: map messages, call the use cases (service token and request checks are the server's interceptors). */
export function membersService(deps: ServiceDeps): ServiceImpl<typeof MembersService> {
  const key = deps.config.secretsKey;
  const ctx = () => contextFor(deps);
  return {
    async inviteMember(req) {
      const { member, token, merchantName } = await inviteMember(ctx(), { merchantId: req.merchantId, email: req.email, role: req.role });
      return { member: memberMessage(member, merchantName), inviteToken: token };
    },
    async getInvite(req) {
      const { member, merchantName } = await getInvite(ctx(), req.inviteToken);
      return { member: memberMessage(member, merchantName) };
    },
    async acceptInvite(req) {
      const { member, merchantName } = await acceptInvite(ctx(), { token: req.inviteToken, password: req.password });
      return { member: memberMessage(member, merchantName) };
    },
    async getTotpEnrolment(req) {
      return getTotpEnrolment(ctx(), key, req.memberId);
    },
    async enableTotp(req) {
      const { member, recoveryCodes } = await enableTotp(ctx(), key, { memberId: req.memberId, code: req.code });
      return { member: memberMessage(member), recoveryCodes };
    },
    async verifyMemberPassword(req) {
      return { member: memberMessage(await verifyMemberPassword(ctx(), { email: req.email, password: req.password })) };
    },
    async verifyMemberCode(req) {
      const check = await verifyMemberCode(ctx(), key, { memberId: req.memberId, code: req.code });
      return check.ok ? { ok: true, recoveryCodeUsed: check.recoveryCodeUsed, recoveryCodesLeft: check.recoveryCodesLeft } : { ok: false };
    },
    async getMember(req) {
      const { member, merchantName } = await getMember(ctx(), req.memberId);
      return { member: memberMessage(member, merchantName) };
    },
    async listMembers(req) {
      return { members: (await listMembers(ctx(), req.merchantId)).map((m) => memberMessage(m)) };
    },
    async changeMemberRole(req) {
      return { member: memberMessage(await changeMemberRole(ctx(), { merchantId: req.merchantId, memberId: req.memberId, role: req.role })) };
    },
    async removeMember(req) {
      await removeMember(ctx(), { merchantId: req.merchantId, memberId: req.memberId });
      return {};
    },
  };
}
