import type { ServiceImpl } from "@connectrpc/connect";
import { toTimestamp } from "../platform/timestamps.ts";
import { SandboxService } from "../../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { advanceClock, getClock } from "./advance-clock.ts";
import { runDueSweeps } from "./run-due-sweeps.ts";
import type { SweepKind } from "../platform/queue/job-kind.ts";

/**
 * `beforeAdvance` runs with the time an advance moves to, before the clock
 * moves (wired in the composition root: the retention tables' months).
 */
export function sandboxService(
  deps: ServiceDeps,
  sweeps: readonly SweepKind[],
  beforeAdvance: (target: Date) => Promise<void> = async () => {},
): ServiceImpl<typeof SandboxService> {
  return {
    async getClock(_req, call) {
      const res = await getClock(useCaseContext(call));
      return { now: toTimestamp(res.now), offsetSeconds: BigInt(res.offsetSeconds) };
    },
    async advanceClock(req, call) {
      const res = await advanceClock(useCaseContext(call), Number(req.seconds), beforeAdvance);
      await runDueSweeps(deps.queues, sweeps, res.offsetSeconds * 1000);
      return { now: toTimestamp(res.now), offsetSeconds: BigInt(res.offsetSeconds) };
    },
  };
}
