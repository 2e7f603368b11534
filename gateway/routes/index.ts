import type { RouteSpec } from "../route.ts";
import { planRoutes } from "./plans.ts";
import { adminMerchantRoutes } from "./admin-merchants.ts";
import { adminSandboxRoutes } from "./admin-sandbox.ts";

/** Every REST operation: mounted by the app and documented by the OpenAPI builder. */
export const allRoutes: RouteSpec[] = [...planRoutes, ...adminMerchantRoutes, ...adminSandboxRoutes];
