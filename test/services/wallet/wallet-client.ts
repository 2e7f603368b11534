import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { errorCodeOf } from "../../../services/platform/rpc/error-code.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { OwnerType, WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { TestSystem } from "../../support/system.ts";

/** A real Connect client to the test system's wallet service (HTTP/2, service token). */
export function walletClient(sys: TestSystem): { wallet: Client<typeof WalletService>; close(): void } {
  const rpc = new RpcClients(sys.config.internalApiToken);
  return { wallet: rpc.client(WalletService, sys.config.serviceUrls.wallet), close: () => rpc.close() };
}

/** A unique, valid email per call (tests share nothing). */
export const uniqueEmail = (prefix = "user") => `${prefix}-${randomUUID().slice(0, 12)}@example.com`;

/** Awaits a call that must fail; returns the Connect error with its domain code. */
export async function rpcFailure(call: Promise<unknown>): Promise<{ code: Code; errorCode: string | undefined; message: string }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    return { code: err.code, errorCode: errorCodeOf(err), message: err.rawMessage };
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/** Arrangement shared by the ledger tests: a merchant that exists, funded users, an account's balance. */
export function ledgerFixtures(sys: TestSystem, wallet: Client<typeof WalletService>) {
  /** Charges and merchant credits are scoped to a merchant that exists (the RPC layer answers NOT_FOUND otherwise). */
  const newMerchant = async () => {
    const id = randomUUID();
    await sys.sql("insert into merchants (id, name, created_at) values (?, 'Ledger merchant', now())", [id]);
    return id;
  };
  const newUser = async () => (await wallet.createWalletUser({ email: uniqueEmail(), password: "password-1", pin: "123456" })).user!;
  const fundedUser = async (asset: string, amount: string) => {
    const user = await newUser();
    await wallet.creditWalletUser({ walletUserId: user.id, asset, amount });
    return user;
  };
  const balanceOf = async (ownerType: OwnerType, ownerId: string, asset: string) =>
    (await wallet.listAccounts({ ownerType, ownerId })).accounts.find((a) => a.asset === asset)?.balance;
  return { newMerchant, newUser, fundedUser, balanceOf };
}
