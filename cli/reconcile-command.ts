import { createLogger } from "../services/platform/logger.ts";
import { reconcile } from "../services/reconciliation/reconcile.ts";
import { print, withContext, type OperatorCommand } from "./command-support.ts";

export const reconcileCommands: Record<string, OperatorCommand> = {
  reconcile: {
    usage: "reconcile [--full]                 money vs its owners: since the last runs, or all history (exit status 1 when anomalies are found)",
    async run(config, argv, json) {
      const scope = argv.includes("--full") ? "FULL" : "INCREMENTAL";
      const res = await withContext(config, (ctx) =>
        reconcile(ctx, createLogger(config.logLevel), { scope, overlapMs: config.reconcileOverlapMs, fullTimeoutMs: config.reconcileFullTimeoutMs }),
      );
      const text =
        res.status === "ok"
          ? `reconciliation ok: ${res.checked} checked`
          : `reconciliation found ${res.anomalies.length} anomal${res.anomalies.length === 1 ? "y" : "ies"} (${res.newlyRecorded} new):\n` +
            res.anomalies
              .map(
                (a) =>
                  `  ${a.kind} ${a.ownerType} ${a.ownerId}${a.walletTransactionId ? ` wallet tx ${a.walletTransactionId}` : ""} ${JSON.stringify(a.details)}`,
              )
              .join("\n");
      print(json, { status: res.status, checked: res.checked, anomalies: res.anomalies }, text);
      return res.status === "ok" ? 0 : 1;
    },
  },
};
