import type { JsonSchema, RouteSpec } from "../route.ts";
import { errorSchema } from "../schemas/common.ts";
import { IDEMPOTENCY_KEY_MAX } from "../idempotency.ts";
import { errorStatusesOf } from "./error-statuses.ts";

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid request: the message names the field and the rule",
  401: "Missing, unknown or revoked key",
  404: "Not found (another merchant's objects are not found either)",
  409: "Conflict with the current state",
  413: "Body larger than the limit",
  415: "Body is not application/json",
  429: "Over the merchant's rate limit (RATE_LIMITED): see Retry-After and RateLimit",
  500: "Unexpected failure (no details are exposed)",
  503: "A dependency is unavailable; retry later",
  504: "A service did not answer in time (TIMEOUT); the outcome is not known yet: retry later (with the same Idempotency-Key, which stays in use until the service has surely stopped)",
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  "Subscription plans": "Recurring plans a merchant sells.",
  Subscriptions: "Customer-authorized subscriptions and their lifecycle.",
  "Subscription changes": "Plan changes the customer approves.",
  "Payment orders": "One-time crypto payments to a fresh deposit address.",
  Events: "The merchant's event log, also delivered as signed webhooks.",
  Webhooks: "Webhook endpoints, their secrets and delivery attempts.",
  Refunds: "Money back to the customer: refunds of subscription charges, in the charged asset.",
  Balance: "The merchant's balance per asset and every movement of it.",
  Settings: "The merchant's billing settings: dunning schedule, final status, advance notice, retry on top-up, customer emails.",
  Coupons: "Coupons and promotion codes: discounts applied to subscriptions' charges.",
  Charges: "One subscription charge and its receipt (number, PDF).",
  Receipts: "The customer's receipt link (no login; the token is the key).",
  Operator: "Operator API (X-ADMIN-KEY): merchants, keys, wallet users, sandbox.",
};

/** JSON Schema keywords of ours that OpenAPI does not know. */
function publicSchema(schema: JsonSchema): JsonSchema {
  return JSON.parse(
    JSON.stringify(schema, (key, value) => {
      if (key.startsWith("x-storable")) return undefined;
      // A field refused with a reason (x-immutable, gateway/validation/ajv.ts) is documented as never valid.
      if (value && typeof value === "object" && "x-immutable" in value) return { description: value.description, not: {} };
      return value;
    }),
  );
}

/**
 * The OpenAPI 3.1 document, built from the RouteSpecs the gateway mounts: the
 * schemas that validate requests are the schemas documented here.
 */
export function buildOpenApiDocument(routes: RouteSpec[], serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: m[1] === "externalId" ? { type: "string", minLength: 1, maxLength: 200 } : { type: "string", format: "uuid" },
    }));
    const queryProps = (route.query?.properties ?? {}) as Record<string, JsonSchema>;
    const queryParams = Object.entries(queryProps).map(([name, schema]) => ({
      name,
      in: "query",
      required: false,
      schema: publicSchema(schema),
      ...(typeof schema.description === "string" && { description: schema.description }),
    }));
    const headerParams = route.idempotent
      ? [
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description: "Retries with the same key and body replay the first response for 24 hours.",
            schema: { type: "string", maxLength: IDEMPOTENCY_KEY_MAX },
          },
        ]
      : [];

    const limited = route.auth === "apiKey";
    const rateLimitHeaders = limited
      ? { headers: { RateLimit: { $ref: "#/components/headers/RateLimit" }, "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" } } }
      : {};
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        ...rateLimitHeaders,
        ...(spec.schema && { content: { "application/json": { schema: publicSchema(spec.schema) } } }),
        ...(spec.contentType && { content: { [spec.contentType]: { schema: { type: "string", format: "binary" } } } }),
      };
    }
    for (const status of errorStatusesOf(route)) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? "Error",
        ...(status === 429 && {
          headers: { ...rateLimitHeaders.headers, "Retry-After": { $ref: "#/components/headers/Retry-After" } },
        }),
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }

    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description && { description: route.description }),
      tags: [route.tag],
      ...(route.auth === "apiKey" && { security: [{ ApiKey: [] }] }),
      ...(route.auth === "admin" && { security: [{ AdminKey: [] }] }),
      ...(route.auth === "none" && { security: [] }),
      ...(pathParams.length + queryParams.length + headerParams.length > 0 && {
        parameters: [...pathParams, ...queryParams, ...headerParams],
      }),
      ...(route.body && {
        requestBody: { required: true, content: { "application/json": { schema: publicSchema(route.body) } } },
      }),
      responses,
    };
  }

  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({
    name,
    description: TAG_DESCRIPTIONS[name] ?? `${name} operations.`,
  }));
  return {
    openapi: "3.1.0",
    info: {
      title: "Subscription Billing API",
      version: "1.1.0",
      description: "Recurring plans, customer-authorized subscriptions and one-time crypto payment orders.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    // Relative: the document is served by the gateway it describes, whatever its host.
    servers: [{ url: serverUrl }],
    security: [{ ApiKey: [] }],
    tags,
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-KEY" },
        AdminKey: { type: "apiKey", in: "header", name: "X-ADMIN-KEY" },
      },
      schemas: { Error: errorSchema },
      headers: {
        RateLimit: {
          description: 'What is left of the merchant\'s bucket (draft-ietf-httpapi-ratelimit-headers): `"merchant";r=<requests left>;t=<seconds until full>`.',
          schema: { type: "string" },
        },
        "RateLimit-Policy": {
          description: 'The merchant\'s bucket: `"merchant";q=<bucket size>;w=<seconds to refill it whole>`.',
          schema: { type: "string" },
        },
        "Retry-After": { description: "Whole seconds (at least 1) before a retry can pass.", schema: { type: "integer", minimum: 1 } },
      },
    },
  };
}
