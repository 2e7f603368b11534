import type { Middleware } from "koa";
import { ConnectError, Code } from "@connectrpc/connect";
import type { GatewayClients } from "../deps.ts";
import type { GatewayState } from "../route.ts";
import { HttpError } from "../http-errors.ts";

export const API_KEY_HEADER = "x-api-key";

/** Resolves X-API-KEY to a merchant through the merchants service; 401 otherwise. */
export function apiKey(clients: GatewayClients): Middleware<GatewayState> {
  return async (ctx, next) => {
    const presented = ctx.get(API_KEY_HEADER);
    if (!presented) throw new HttpError(401, "INVALID_API_KEY", "X-API-KEY header is required");
    try {
      const { merchantId } = await clients.merchants.authenticateApiKey({ apiKey: presented });
      ctx.state.merchantId = merchantId;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
        throw new HttpError(401, "INVALID_API_KEY", "X-API-KEY is unknown or revoked");
      }
      throw err;
    }
    await next();
  };
}
