import { defineStatusMachine } from "../platform/status-machine.ts";
import { WALLET_USER_STATUSES, type WalletUserStatus } from "./contract.ts";

export type WalletUserEvent = "freeze" | "unfreeze";

/** The wallet user status machine: from → event → to. Anything not listed is refused. */
export const walletUserMachine = defineStatusMachine<WalletUserStatus, WalletUserEvent>(
  "wallet user",
  WALLET_USER_STATUSES,
  [
    { from: "ACTIVE", event: "freeze", to: "FROZEN" },
    { from: "FROZEN", event: "unfreeze", to: "ACTIVE" },
  ],
  (from, event) => `cannot ${event} a wallet user whose status is ${from}`,
);
