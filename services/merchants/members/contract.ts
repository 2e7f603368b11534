/**
 * What the gateway and the members service agree on (imports nothing from
 * the project): the roles, what each may do in the dashboard, and the
 * password rule shown on the invite page.
 */
const MEMBER_ROLES = ["OWNER", "ADMIN", "DEVELOPER", "SUPPORT", "VIEWER"] as const;
type MemberRole = (typeof MEMBER_ROLES)[number];

export const isMemberRole = (value: string): value is MemberRole => (MEMBER_ROLES as readonly string[]).includes(value);

/**
 * Everything a member may do beyond reading (every role reads every page).
 * The table: OWNER and ADMIN everything; DEVELOPER API keys, webhooks,
 * events; SUPPORT pause/resume/cancel subscriptions and refunds; VIEWER
 * nothing. Checked server-side on every dashboard action; pages hide the
 * buttons of what the role may not do.
 */
export type Permission =
  | "team.manage"
  | "api-keys.manage"
  | "webhooks.manage"
  | "events.redeliver"
  | "plans.manage"
  | "subscriptions.manage"
  | "refunds.create"
  | "payouts.manage"
  | "exports.read";

const EVERYTHING: readonly Permission[] = [
  "team.manage",
  "api-keys.manage",
  "webhooks.manage",
  "events.redeliver",
  "plans.manage",
  "subscriptions.manage",
  "refunds.create",
  "payouts.manage",
  "exports.read",
];

const ROLE_PERMISSIONS: Readonly<Record<MemberRole, readonly Permission[]>> = {
  OWNER: EVERYTHING,
  ADMIN: EVERYTHING,
  DEVELOPER: ["api-keys.manage", "webhooks.manage", "events.redeliver"],
  SUPPORT: ["subscriptions.manage", "refunds.create"],
  VIEWER: [],
};

export const may = (role: string, permission: Permission): boolean => isMemberRole(role) && ROLE_PERMISSIONS[role].includes(permission);

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 200;
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const RECOVERY_CODE_COUNT = 10;
