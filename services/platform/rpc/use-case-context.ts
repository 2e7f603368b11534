import { createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { Orm } from "../database/orm.ts";
import type { Clock } from "../clock.ts";
import type { UseCaseContext } from "../use-case.ts";

/** A call's use-case context, made on first use: a call that never touches the database forks nothing. */
type Provider = () => UseCaseContext;

const useCaseKey = createContextKey<Provider | undefined>(undefined, { description: "use-case context" });

/**
 * Every RPC handler's use-case context comes from here: one entity manager per call (a fork, never the global
 * one) and the process's clock, set by one server interceptor instead of a `contextFor(deps)` in each handler.
 * Installed innermost (services/start-services.ts), so a call refused by the token check or the validation
 * never gets one. Jobs, which are not RPCs, take theirs from `contextFor` (services/platform/service-deps.ts).
 */
export function provideUseCaseContext(deps: { orm: Orm; clock: Clock }): Interceptor {
  return (next) => (req) => {
    let made: UseCaseContext | undefined;
    req.contextValues.set(useCaseKey, () => (made ??= { em: deps.orm.em.fork(), clock: deps.clock }));
    return next(req);
  };
}

/** The use-case context of the call being handled (one per call: two use cases of one handler share it). */
export function useCaseContext(call: HandlerContext): UseCaseContext {
  const provide = call.values.get(useCaseKey);
  if (!provide) throw new Error("no use-case context: provideUseCaseContext is not among the server interceptors");
  return provide();
}
