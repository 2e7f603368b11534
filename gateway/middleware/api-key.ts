import type { Middleware } from "koa";
import { ConnectError, Code } from "@connectrpc/connect";
import { hashApiKey } from "../../services/merchants/contract.ts";
import type { GatewayClients } from "../deps.ts";
import type { GatewayState } from "../route.ts";
import { HttpError } from "../http-errors.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import type { ApiKeyCache } from "../api-key-cache.ts";

export const API_KEY_HEADER = "x-api-key";

export interface ApiKeyLookupCache {
  cache: ApiKeyCache;
  /** False while revocations cannot be heard (Redis down): then nothing is cached or trusted. */
  isLive(): boolean;
}

/** Resolves X-API-KEY to a merchant through the merchants service (or the cache); 401 otherwise. */
export function apiKey(clients: GatewayClients, lookup?: ApiKeyLookupCache): Middleware<GatewayState> {
  return async (ctx, next) => {
    const presented = ctx.get(API_KEY_HEADER);
    if (!presented) throw new HttpError(401, "INVALID_API_KEY", "X-API-KEY header is required");
    const live = lookup?.isLive() ?? false;
    const keyHash = lookup ? hashApiKey(presented) : "";
    const cached = live ? lookup!.cache.get(keyHash) : undefined;
    if (cached) {
      ctx.state.merchantId = cached;
    } else {
      // Taken before the lookup: a revocation heard while it is in flight keeps its answer out of the cache.
      const epoch = live ? lookup!.cache.epoch : 0;
      try {
        const { merchantId } = await clients.merchants.authenticateApiKey({ apiKey: presented });
        ctx.state.merchantId = merchantId;
        if (live) lookup!.cache.set(keyHash, merchantId, epoch);
      } catch (err) {
        // Only the merchants service's verdict on the key; a refused service token is our fault (500).
        if (err instanceof ConnectError && err.code === Code.Unauthenticated && errorCodeOf(err) === "INVALID_API_KEY") {
          throw new HttpError(401, "INVALID_API_KEY", "X-API-KEY is unknown or revoked");
        }
        throw err;
      }
    }
    await next();
  };
}
