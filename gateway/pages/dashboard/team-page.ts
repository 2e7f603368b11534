import type { Router } from "@koa/router";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorCodeOf } from "../../../services/platform/rpc/error-code.ts";
import { isMemberRole } from "../../../services/merchants/members/contract.ts";
import { redirect, type Ctx, type Form } from "../page-http.ts";
import { checkFreshCode, dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD, inviteUrlOf } from "./paths.ts";
import { memberStatusText, ROLE_DESCRIPTIONS, roleText } from "./words.ts";

const PATH = `${DASHBOARD}/team`;
const NOTICES = new Map([
  ["role-changed", "The role is changed."],
  ["removed", "The member is removed and logged out."],
]);

const LAST_OWNER = "A merchant must keep at least one owner: make another member an owner first.";

interface Screen {
  status?: number;
  error?: string;
  notice?: string;
  inviteEmail?: string;
  invited?: { email: string; url: string };
}

/**
 * Team: the members, and for OWNER/ADMIN invite, change role, remove. A role
 * change or a removal asks for a fresh TOTP code in the same form; the last
 * owner can be neither demoted nor removed (the service refuses, LAST_OWNER).
 */
export function teamPage(router: Router, deps: DashboardDeps): void {
  const { members, pages } = deps;

  async function render(ctx: Ctx, signed: Signed, screen: Screen = {}) {
    const list = (await members.listMembers({ merchantId: signed.member.merchantId })).members;
    pages.page(ctx, screen.status ?? 200, "dashboard/team", {
      frame: signed.frame("Team", PATH),
      canManage: signed.may("team.manage"),
      members: list.map((m) => ({
        id: m.id,
        email: m.email,
        role: m.role,
        roleText: roleText(m.role),
        statusText: memberStatusText(m.status),
        self: m.id === signed.member.id,
      })),
      roles: ROLE_DESCRIPTIONS,
      inviteEmail: screen.inviteEmail ?? "",
      inviteUrl: screen.invited?.url,
      invitedEmail: screen.invited?.email,
      error: screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, PATH, {
    async get(ctx, signed) {
      const done = typeof ctx.query.done === "string" ? NOTICES.get(ctx.query.done) : undefined;
      return render(ctx, signed, { ...(done && { notice: done }) });
    },
    async post(ctx, signed, form) {
      if (!["invite-member", "change-role", "remove-member"].includes(form.action ?? ""))
        return render(ctx, signed, { status: 400, error: "Choose what to do." });
      if (!signed.may("team.manage")) return refuse(deps, ctx, signed, PATH);
      try {
        if (form.action === "invite-member") return await invite(ctx, signed, form);
        const memberId = form.memberId ?? "";
        const role = form.role ?? "";
        if (form.action === "change-role" && !isMemberRole(role)) return render(ctx, signed, { status: 422, error: "Choose a role." });
        // Cheap refusals before the code is asked for (and spent); the service checks both again, atomically.
        const team = (await members.listMembers({ merchantId: signed.member.merchantId })).members;
        const target = team.find((m) => m.id === memberId);
        if (!target) return notFoundPage(deps, ctx);
        const owners = team.filter((m) => m.role === "OWNER" && m.status === "ACTIVE" && m.id !== target.id).length;
        if (target.role === "OWNER" && owners === 0 && (form.action === "remove-member" || role !== "OWNER"))
          return render(ctx, signed, { status: 409, error: LAST_OWNER });
        const codeProblem = await checkFreshCode(deps, ctx, signed, form);
        if (codeProblem) return render(ctx, signed, { status: 401, error: codeProblem });
        if (form.action === "change-role") {
          await members.changeMemberRole({ merchantId: signed.member.merchantId, memberId, role });
          return redirect(ctx, `${PATH}?done=role-changed`);
        }
        await members.removeMember({ merchantId: signed.member.merchantId, memberId });
        return redirect(ctx, `${PATH}?done=removed`);
      } catch (err) {
        if (!(err instanceof ConnectError)) throw err;
        const code = errorCodeOf(err);
        if (code === "MEMBER_NOT_FOUND") return notFoundPage(deps, ctx);
        if (code === "LAST_OWNER") return render(ctx, signed, { status: 409, error: LAST_OWNER });
        if (code === "MEMBER_EXISTS")
          return render(ctx, signed, { status: 409, error: "A member with this email already exists.", inviteEmail: form.email ?? "" });
        if (err.code === Code.InvalidArgument)
          return render(ctx, signed, { status: 422, error: "Enter an email address and choose a role.", inviteEmail: form.email ?? "" });
        throw err;
      }
    },
  });

  async function invite(ctx: Ctx, signed: Signed, form: Form) {
    const email = (form.email ?? "").trim();
    // The same RPC (and so the same checks) as POST /admin/v1/merchants/{id}/members.
    const res = await members.inviteMember({ merchantId: signed.member.merchantId, email, role: form.role ?? "" });
    return render(ctx, signed, { status: 201, invited: { email: res.member!.email, url: inviteUrlOf(deps.publicBaseUrl, res.inviteToken) } });
  }
}
