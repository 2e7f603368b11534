import { SERVICE_NAMES, WORKER_GROUP_NAMES, type Config, type ServiceName, type WorkerGroup } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import { migrateDatabase } from "./database.ts";
import { startSystem } from "./system.ts";

/**
 * `billing start all` is the developer's one process (creates the database,
 * migrates, runs everything). Any other role list runs just those parts, so
 * SREs scale the gateway, each service and each worker group separately.
 * Returns -1: the process lives until SIGTERM/SIGINT.
 */
export async function startCommand(config: Config, logger: Logger, roles: string[]): Promise<number> {
  const services = new Set<ServiceName>();
  const groups = new Set<WorkerGroup>();
  let gateway = false;
  for (const role of roles) {
    if (role === "all") {
      gateway = true;
      SERVICE_NAMES.forEach((s) => services.add(s));
      WORKER_GROUP_NAMES.forEach((g) => groups.add(g));
    } else if (role === "gateway") gateway = true;
    else if (role === "services") config.services.forEach((s) => services.add(s));
    else if (role === "workers") config.workerGroups.forEach((g) => groups.add(g));
    else if ((SERVICE_NAMES as readonly string[]).includes(role)) services.add(role as ServiceName);
    else if ((WORKER_GROUP_NAMES as readonly string[]).includes(role)) groups.add(role as WorkerGroup);
    else {
      console.error(`unknown role: ${role}`);
      return 2;
    }
  }
  if (roles.includes("all")) {
    const { databaseCreated, applied } = await migrateDatabase(config);
    if (databaseCreated) logger.info("database created");
    if (applied.length) logger.info({ applied }, "migrations applied");
  }
  const system = await startSystem(config, logger, { services: [...services], gateway, workerGroups: [...groups] });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => {
      logger.error("shutdown took too long; exiting");
      process.exit(1);
    }, 30_000);
    force.unref();
    await system.close();
    logger.info("stopped");
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  return -1;
}
