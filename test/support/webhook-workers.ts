import { startWorkers, type RunningWorkers } from "../../workers/start-workers.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import type { TestSystem } from "./system.ts";

/** Starts the `webhooks` worker group in this process on a test system that was started without it. */
export async function startWebhookWorkers(sys: TestSystem): Promise<RunningWorkers> {
  const rpc = new RpcClients(sys.config.internalApiToken);
  const workers = await startWorkers(
    {
      config: sys.config,
      logger: createLogger(sys.config.logLevel),
      orm: sys.system.orm!,
      clock: sys.system.clock!.clock,
      queues: sys.system.queues!,
      rpc,
    },
    ["webhooks"],
  );
  return {
    watchdog: workers.watchdog,
    async close() {
      await workers.close();
      rpc.close();
    },
  };
}
