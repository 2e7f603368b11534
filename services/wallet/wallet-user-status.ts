import { DomainError } from "../platform/errors.ts";
import type { WalletUserStatus } from "./entities.ts";

/** The wallet user status machine: from → event → to. Anything not listed is refused. */
export const WALLET_USER_TRANSITIONS: Readonly<Record<WalletUserStatus, Readonly<Partial<Record<WalletUserEvent, WalletUserStatus>>>>> = {
  ACTIVE: { freeze: "FROZEN" },
  FROZEN: { unfreeze: "ACTIVE" },
};

export type WalletUserEvent = "freeze" | "unfreeze";

export function nextWalletUserStatus(from: WalletUserStatus, event: WalletUserEvent): WalletUserStatus {
  const to = WALLET_USER_TRANSITIONS[from][event];
  if (!to) {
    throw new DomainError("failed_precondition", "INVALID_STATUS_TRANSITION", `cannot ${event} a wallet user whose status is ${from}`);
  }
  return to;
}
