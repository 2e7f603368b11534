import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceName } from "./platform/config.ts";
import type { ServiceDeps } from "./platform/service-deps.ts";
import { CatalogService } from "../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { MerchantService } from "../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { catalogService } from "./catalog/rpc.ts";
import { merchantService } from "./merchants/rpc.ts";
import { SandboxService } from "../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import { sandboxService } from "./sandbox/rpc.ts";

/** The one place that says which Connect service each service name serves. */
const REGISTRATIONS: Partial<Record<ServiceName, (router: ConnectRouter, deps: ServiceDeps) => void>> = {
  merchants: (router, deps) => router.service(MerchantService, merchantService(deps)),
  catalog: (router, deps) => router.service(CatalogService, catalogService(deps)),
  sandbox: (router, deps) => router.service(SandboxService, sandboxService(deps)),
};

export function serviceRoutes(deps: ServiceDeps, names: readonly ServiceName[]) {
  return (router: ConnectRouter) => {
    for (const name of names) REGISTRATIONS[name]?.(router, deps);
  };
}
