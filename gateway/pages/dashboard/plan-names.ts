import { Code, ConnectError } from "@connectrpc/connect";
import type { DashboardDeps } from "./member-gate.ts";

/** The names of a page's plans, one GetPlan per distinct plan (a page holds at most a few). */
export async function planNames(deps: DashboardDeps, merchantId: string, planIds: readonly string[]): Promise<Map<string, string>> {
  const ids = [...new Set(planIds)];
  const names = await Promise.all(
    ids.map(async (id) => {
      try {
        return [id, (await deps.clients.catalog.getPlan({ merchantId, id })).plan?.name ?? id] as const;
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return [id, id] as const;
        throw err;
      }
    }),
  );
  return new Map(names);
}
