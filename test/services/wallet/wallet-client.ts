import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { errorCodeOf } from "../../../services/platform/rpc/errors.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
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
