import { DASHBOARD } from "./paths.ts";

/** The dashboard's words for codes, and its navigation (only pages that exist). */
const ROLE_TEXT: Record<string, string> = { OWNER: "Owner", ADMIN: "Admin", DEVELOPER: "Developer", SUPPORT: "Support", VIEWER: "Viewer" };
export const roleText = (role: string) => ROLE_TEXT[role] ?? role;

export const ROLE_DESCRIPTIONS: { value: string; label: string; description: string }[] = [
  { value: "OWNER", label: "Owner", description: "Everything. A merchant always keeps at least one owner." },
  { value: "ADMIN", label: "Admin", description: "Everything." },
  { value: "DEVELOPER", label: "Developer", description: "API keys, webhooks and events; reads everything else." },
  { value: "SUPPORT", label: "Support", description: "Pauses, resumes and cancels subscriptions and refunds charges; reads everything else." },
  { value: "VIEWER", label: "Viewer", description: "Reads everything; changes nothing." },
];

const STATUS_TEXT: Record<string, string> = { INVITED: "Invited", ACTIVE: "Active" };
export const memberStatusText = (status: string) => STATUS_TEXT[status] ?? status;

export const NAV: { href: string; label: string }[] = [
  { href: DASHBOARD, label: "Overview" },
  { href: `${DASHBOARD}/team`, label: "Team" },
  { href: `${DASHBOARD}/audit-log`, label: "Audit log" },
  { href: `${DASHBOARD}/exports`, label: "Exports" },
];

const ACTOR_TEXT: Record<string, string> = { member: "Member", api_key: "API key", operator: "Operator", customer: "Customer" };
export const actorTypeText = (type: string) => ACTOR_TEXT[type] ?? type;
