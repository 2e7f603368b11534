import type { WalletUserRow, WalletUserStatus } from "./entities.ts";

/** What callers may see of a wallet user: never the hashes or the failure counters. */
export interface WalletUserView {
  id: string;
  email: string;
  status: WalletUserStatus;
  createdAt: Date;
  pinLocked: boolean;
  pinLockedUntil: Date | undefined;
}

/** `now` is the service clock: a lock that has run out is reported as unlocked. */
export function walletUserView(user: WalletUserRow, now: Date): WalletUserView {
  const locked = user.pinLockedUntil != null && user.pinLockedUntil.getTime() > now.getTime();
  return {
    id: user.id,
    email: user.email,
    status: user.status,
    createdAt: user.createdAt,
    pinLocked: locked,
    pinLockedUntil: locked ? user.pinLockedUntil! : undefined,
  };
}
