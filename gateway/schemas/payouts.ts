import { ASSET_CODES } from "../../services/wallet/contract.ts";
import {
  ADDRESS_MAX_LENGTH,
  DESTINATION_LABEL_MAX_LENGTH,
  DESTINATION_STATUSES,
  PAYOUT_FAILURE_REASON_MAX_LENGTH,
  PAYOUT_SOURCES,
  VISIBLE_PAYOUT_STATUSES,
} from "../../services/payouts/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, metadataSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const createDestinationBody = {
  type: "object",
  additionalProperties: false,
  required: ["asset", "address"],
  properties: {
    asset: { type: "string", enum: [...ASSET_CODES], description: "The asset paid out to this address; its network decides the address rules." },
    address: {
      type: "string",
      minLength: 1,
      maxLength: ADDRESS_MAX_LENGTH,
      description:
        "BITCOIN: segwit bech32 (v0) / bech32m (taproot) or base58check P2PKH/P2SH, on the deployment's chain; ETHEREUM: 0x + 40 hex digits, mixed case must be a valid EIP-55 checksum; TRON: base58check with the 0x41 prefix (T…). A wrong one is a 400 naming `address` and the rule.",
    },
    label: { type: "string", maxLength: DESTINATION_LABEL_MAX_LENGTH, description: "Your name for it." },
  },
} as const;

export const listDestinationsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...DESTINATION_STATUSES], description: "Only destinations in this status (on the service clock)." },
    asset: { type: "string", enum: [...ASSET_CODES], description: "Only destinations of this asset." },
  },
} as const;

export const destinationSchema = {
  type: "object",
  required: ["id", "object", "asset", "network", "address", "label", "status", "activatesAt", "createdAt"],
  description: "The same record as the data of payout_destination.created.",
  properties: {
    id: uuidSchema,
    object: { const: "payout_destination" },
    asset: { type: "string", enum: [...ASSET_CODES] },
    network: { type: "string" },
    address: { type: "string", description: "Canonical spelling: bech32 in lower case, EVM addresses in EIP-55 mixed case." },
    label: nullable({ type: "string" }),
    status: {
      type: "string",
      enum: [...DESTINATION_STATUSES],
      description: "PENDING_ACTIVATION until activatesAt (the cooling period, PAYOUT_DESTINATION_COOLDOWN_MINUTES), then ACTIVE; REMOVED after DELETE.",
    },
    activatesAt: dateTimeSchema,
    createdAt: dateTimeSchema,
  },
} as const;

export const createPayoutBody = {
  type: "object",
  additionalProperties: false,
  required: ["destinationId", "amount"],
  properties: {
    destinationId: { ...uuidSchema, description: "An ACTIVE payout destination of yours." },
    amount: {
      ...amountSchema,
      description:
        "In the destination's asset: greater than 0, at most the asset's decimals, at least its payout minimum (GET /admin/v1/assets). The fee comes on top.",
    },
    metadata: metadataSchema,
  },
} as const;

export const listPayoutsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...VISIBLE_PAYOUT_STATUSES], description: "Only payouts in this status." },
    destinationId: { ...uuidSchema, description: "Only payouts to this destination." },
    asset: { type: "string", enum: [...ASSET_CODES], description: "Only payouts in this asset." },
  },
} as const;

const payoutProperties = {
  id: { ...uuidSchema, description: "Also the chain transfer's idempotency key." },
  object: { const: "payout" },
  status: {
    type: "string",
    enum: [...VISIBLE_PAYOUT_STATUSES],
    description: "PENDING → (IN_REVIEW →) PROCESSING → PAID or FAILED; PENDING → CANCELLED. See the status table in docs/payments.md.",
  },
  destinationId: nullable(uuidSchema),
  asset: { type: "string", enum: [...ASSET_CODES] },
  network: { type: "string" },
  address: { type: "string" },
  amount: { ...amountOutSchema, description: "What the destination receives." },
  fee: { ...amountOutSchema, description: "The asset's network fee (asset registry), charged on top: amount + fee leave your balance." },
  txHash: { ...nullable({ type: "string" }), description: "Set once handed to the chain (PROCESSING)." },
  failureReason: { ...nullable({ type: "string" }), description: "Why it FAILED (REJECTED when an operator rejected it in review)." },
  source: {
    type: "string",
    enum: [...PAYOUT_SOURCES],
    description: "MERCHANT: your payout; ORDER_REFUND: a refund of a payment order paid out to the customer.",
  },
  createdAt: dateTimeSchema,
  paidAt: nullable(dateTimeSchema),
  metadata: metadataSchema,
} as const;

const payoutRequired = [
  "id",
  "object",
  "status",
  "destinationId",
  "asset",
  "network",
  "address",
  "amount",
  "fee",
  "txHash",
  "failureReason",
  "createdAt",
  "paidAt",
  "metadata",
];

export const payoutSchema = {
  type: "object",
  required: payoutRequired,
  description: "The same record as the data of payout.* events.",
  properties: payoutProperties,
} as const;

export const adminPayoutSchema = {
  type: "object",
  required: [...payoutRequired, "merchantId"],
  properties: { ...payoutProperties, merchantId: uuidSchema },
} as const;

export const adminListPayoutsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...VISIBLE_PAYOUT_STATUSES], description: "Only payouts in this status (IN_REVIEW: waiting for approval)." },
    merchantId: { ...uuidSchema, description: "Only this merchant's payouts." },
  },
} as const;

export const sandboxFailPayoutBody = {
  type: "object",
  additionalProperties: false,
  required: ["reason"],
  properties: { reason: { type: "string", minLength: 1, maxLength: PAYOUT_FAILURE_REASON_MAX_LENGTH, description: "Becomes the payout's failureReason." } },
} as const;
