import { dateTimeSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

const filterText = { type: "string", minLength: 1, maxLength: 200 } as const;

export const listAuditLogQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    actor: { ...filterText, description: "Only this actor: its id (member id, API key id…) or its label (a member's email, a key's prefix), exactly." },
    action: { ...filterText, pattern: "^[a-z_]+\\.[a-z_]+$", description: "Only this action, e.g. `subscription.cancel`." },
    objectId: { ...filterText, description: "Only entries about this object." },
    from: { ...dateTimeSchema, description: "Only entries at or after this instant (RFC 3339)." },
    to: { ...dateTimeSchema, description: "Only entries strictly before this instant (RFC 3339)." },
  },
} as const;

export const auditEntrySchema = {
  type: "object",
  required: ["id", "object", "at", "actor", "action", "objectType", "objectId", "ip", "userAgent", "requestId"],
  description: "One state-changing action (or a failed login or code), recorded in the same transaction as the change. Never changed or deleted.",
  properties: {
    id: uuidSchema,
    object: { const: "audit_entry" },
    at: { ...dateTimeSchema, description: "When it happened (wall clock of the database)." },
    actor: {
      type: "object",
      required: ["type", "id", "label"],
      properties: {
        type: { type: "string", enum: ["member", "api_key", "operator", "customer"] },
        id: { type: "string", description: "Member id, API key id, operator key name, or the customer's wallet user id." },
        label: { type: "string", description: "For a person to read: the member's email, the key's prefix, the customer's email." },
      },
    },
    action: {
      type: "string",
      description: "`<object type>.<verb>`, e.g. `subscription.cancel`, `api_key.create`, `member.login_failed`.",
      examples: ["subscription.cancel"],
    },
    objectType: { type: "string", examples: ["subscription"] },
    objectId: nullable({ type: "string" }),
    ip: { ...nullable({ type: "string" }), description: "The client address as the gateway decided it (TRUST_PROXY)." },
    userAgent: nullable({ type: "string" }),
    requestId: { ...nullable({ type: "string" }), description: "The request's X-Request-Id (also in the access log)." },
  },
} as const;
