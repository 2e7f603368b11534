import type { GetWalletUserResponse } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { amount, compare } from "../../platform/money.ts";
import type { SubscriptionPorts } from "../ports.ts";

/** The wallet user and their accounts as one getWalletUser read them: one read serves every check of one assessment. */
export type WalletSnapshot = Pick<GetWalletUserResponse, "user" | "accounts">;

interface FundingBalance {
  balance: string;
  /** False when the wallet user or this account is frozen: a charge would be refused whatever the balance. */
  usable: boolean;
}

/** Reads the wallet user's accounts now (one RPC). */
export async function readWalletSnapshot(ports: SubscriptionPorts, walletUserId: string): Promise<WalletSnapshot> {
  const { user, accounts } = await ports.wallet.getWalletUser({ id: walletUserId });
  return { user, accounts };
}

/**
 * The one usable-balance rule: an asset's balance counts only when the wallet
 * user is ACTIVE and that account exists and is not frozen.
 */
export function balanceIn(snapshot: WalletSnapshot, asset: string): FundingBalance {
  const account = snapshot.accounts.find((a) => a.asset === asset);
  return { balance: account?.balance ?? "0", usable: snapshot.user?.status === "ACTIVE" && account !== undefined && !account.frozen };
}

/** The wallet user's balance in one asset, as the wallet reports it now (one RPC). */
export async function fundingBalance(ports: SubscriptionPorts, walletUserId: string, asset: string): Promise<FundingBalance> {
  return balanceIn(await readWalletSnapshot(ports, walletUserId), asset);
}

/** What a charge may take from this balance: all of it when usable, nothing otherwise. */
export const usableAmount = (funding: FundingBalance): string => (funding.usable ? funding.balance : "0");

export const covers = (funding: FundingBalance, due: string): boolean => funding.usable && compare(amount(funding.balance), amount(due)) >= 0;
