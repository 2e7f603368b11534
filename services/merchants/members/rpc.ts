import type { ServiceImpl } from "@connectrpc/connect";
import { MembersService } from "../../../proto/gen/billing/merchants/v1/members_pb.ts";
import type { ServiceDeps } from "../../platform/service-deps.ts";
import { useCaseContext } from "../../platform/rpc/use-case-context.ts";
import { memberMessage } from "./member-record.ts";
import { inviteMember } from "./invite-member.ts";
import { acceptInvite, getInvite } from "./accept-invite.ts";
import { enableTotp, getTotpEnrolment } from "./enrol-totp.ts";
import { verifyMemberCode, verifyMemberPassword } from "./verify-member.ts";
import { changeMemberRole, getMember, listMembers, removeMember } from "./team.ts";

/** The members RPCs: map messages, call the use cases (service token and request checks are the server's interceptors). */
export function membersService(deps: ServiceDeps): ServiceImpl<typeof MembersService> {
  const key = deps.config.secretsKey;
  return {
    async inviteMember(req, call) {
      const { member, token, merchantName } = await inviteMember(useCaseContext(call), { merchantId: req.merchantId, email: req.email, role: req.role });
      return { member: memberMessage(member, merchantName), inviteToken: token };
    },
    async getInvite(req, call) {
      const { member, merchantName } = await getInvite(useCaseContext(call), req.inviteToken);
      return { member: memberMessage(member, merchantName) };
    },
    async acceptInvite(req, call) {
      const { member, merchantName } = await acceptInvite(useCaseContext(call), { token: req.inviteToken, password: req.password });
      return { member: memberMessage(member, merchantName) };
    },
    async getTotpEnrolment(req, call) {
      return getTotpEnrolment(useCaseContext(call), key, req.memberId);
    },
    async enableTotp(req, call) {
      const { member, recoveryCodes } = await enableTotp(useCaseContext(call), key, { memberId: req.memberId, code: req.code });
      return { member: memberMessage(member), recoveryCodes };
    },
    async verifyMemberPassword(req, call) {
      return { member: memberMessage(await verifyMemberPassword(useCaseContext(call), { email: req.email, password: req.password })) };
    },
    async verifyMemberCode(req, call) {
      const check = await verifyMemberCode(useCaseContext(call), key, { memberId: req.memberId, code: req.code });
      return check.ok ? { ok: true, recoveryCodeUsed: check.recoveryCodeUsed, recoveryCodesLeft: check.recoveryCodesLeft } : { ok: false };
    },
    async getMember(req, call) {
      const { member, merchantName } = await getMember(useCaseContext(call), req.memberId);
      return { member: memberMessage(member, merchantName) };
    },
    async listMembers(req, call) {
      return { members: (await listMembers(useCaseContext(call), req.merchantId)).map((m) => memberMessage(m)) };
    },
    async changeMemberRole(req, call) {
      return { member: memberMessage(await changeMemberRole(useCaseContext(call), { merchantId: req.merchantId, memberId: req.memberId, role: req.role })) };
    },
    async removeMember(req, call) {
      await removeMember(useCaseContext(call), { merchantId: req.merchantId, memberId: req.memberId });
      return {};
    },
  };
}
