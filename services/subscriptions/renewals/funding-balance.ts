import { amount, compare } from "../../platform/money.ts";
import type { SubscriptionPorts } from "../ports.ts";

export interface FundingBalance {
  balance: string;
  /** False when the wallet user or this account is frozen: a charge would be refused whatever the balance. */
  usable: boolean;
}

/** The wallet user's balance in one asset, as the wallet reports it now (one RPC). */
export async function fundingBalance(ports: SubscriptionPorts, walletUserId: string, asset: string): Promise<FundingBalance> {
  const { user, accounts } = await ports.wallet.getWalletUser({ id: walletUserId });
  const account = accounts.find((a) => a.asset === asset);
  return { balance: account?.balance ?? "0", usable: user?.status === "ACTIVE" && account !== undefined && !account.frozen };
}

export const covers = (funding: FundingBalance, due: string): boolean => funding.usable && compare(amount(funding.balance), amount(due)) >= 0;
