import type { Middleware } from "koa";
import { ConnectError, Code } from "@connectrpc/connect";
import { hashApiKey } from "../../services/merchants/contract.ts";
import type { GatewayClients } from "../deps.ts";
import type { GatewayState } from "../route.ts";
import { HttpError } from "../http-errors.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import type { ApiKeyCache } from "../api-key-cache.ts";
import { setActor } from "../../services/platform/audit/call-context.ts";

const API_KEY_HEADER = "x-api-key";

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
    const cached = live ? lookup!.cache.lookup(keyHash) : undefined;
    if (cached) {
      ctx.state.merchantId = cached.merchantId;
      setActor(apiKeyActor(cached.keyId, presented));
    } else {
      // Taken before the lookup: a revocation heard while it is in flight keeps its answer out of the cache.
      const epoch = live ? lookup!.cache.epoch : 0;
      try {
        const { merchantId, keyId } = await clients.merchants.authenticateApiKey({ apiKey: presented });
        ctx.state.merchantId = merchantId;
        setActor(apiKeyActor(keyId, presented));
        if (live) lookup!.cache.set(keyHash, merchantId, epoch, keyId);
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

/** The audit log's actor: the key's id, labelled by its public prefix (as the key list shows it; never more of the key). */
const apiKeyActor = (keyId: string, presented: string) => ({ type: "api_key" as const, id: keyId, label: presented.slice(0, 12) });
