import { ANOMALY_KINDS, OWNER_TYPES, RECONCILIATION_STATUSES } from "../../services/reconciliation/contract.ts";

export const reconciliationSchema = {
  type: "object",
  required: ["status", "checked", "anomalies"],
  properties: {
    status: { type: "string", enum: RECONCILIATION_STATUSES, description: "ok when money and its owners agree everywhere" },
    checked: { type: "integer", description: "Wallet transactions and owning rows compared" },
    anomalies: {
      type: "array",
      items: {
        type: "object",
        required: ["kind", "ownerType", "ownerId", "walletTransactionId", "details"],
        properties: {
          kind: { type: "string", enum: ANOMALY_KINDS },
          ownerType: { type: "string", enum: OWNER_TYPES },
          ownerId: { type: "string" },
          walletTransactionId: { type: ["string", "null"] },
          details: {
            type: "object",
            description: "Both sides: ownerStatus, ownerAsset, ownerAmount, walletAsset, walletAmount (exact decimal strings or null)",
            additionalProperties: { type: ["string", "number", "null"] },
          },
        },
      },
    },
  },
} as const;
