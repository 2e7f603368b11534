import { dateTimeSchema, uuidSchema } from "./common.ts";

export const createMerchantBody = {
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: { name: { type: "string", minLength: 1, maxLength: 200 } },
} as const;

export const createdMerchantSchema = {
  type: "object",
  required: ["id", "name", "apiKey"],
  properties: {
    id: uuidSchema,
    name: { type: "string" },
    apiKey: { type: "string", description: "Shown once; only its SHA-256 digest is stored." },
    apiKeyId: uuidSchema,
    createdAt: dateTimeSchema,
  },
} as const;

export const createdApiKeySchema = {
  type: "object",
  required: ["id", "apiKey"],
  properties: { id: uuidSchema, apiKey: { type: "string", description: "Shown once." } },
} as const;
