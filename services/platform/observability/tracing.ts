import { register } from "node:module";
import { createAddHookMessageChannel } from "import-in-the-middle";

// The SDK registers process-wide globals (tracer provider, propagator, module hooks): once per process.
let started = false;

/**
 * Starts the OpenTelemetry Node SDK, configured by the standard OTEL_*
 * variables (endpoint, protocol incl. http/json, service name, sampler,
 * resource attributes). Must run before the instrumented libraries load:
 * register.ts does it from `node --import`. The ESM hook only wraps the
 * modules an instrumentation asked for (http, koa, pg, ioredis).
 */
export async function startTracing(): Promise<void> {
  if (started) return;
  started = true;
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register("import-in-the-middle/hook.mjs", import.meta.url, registerOptions);
  const [{ NodeSDK }, { HttpInstrumentation }, { KoaInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    import("@opentelemetry/instrumentation-http"),
    import("@opentelemetry/instrumentation-koa"),
    import("@opentelemetry/instrumentation-pg"),
    import("@opentelemetry/instrumentation-ioredis"),
  ]);
  const OPERATIONS_PATHS = new Set(["/metrics", "/healthz", "/readyz"]);
  const sdk = new NodeSDK({
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => OPERATIONS_PATHS.has((req.url ?? "").split("?")[0] ?? "") }),
      new KoaInstrumentation(),
      // Only inside a traced operation: BullMQ's polling and idle pool checks would be noise.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  let stopping = false;
  // The app closes its servers on SIGTERM and the loop drains: flush the last spans then.
  process.on("beforeExit", () => {
    if (stopping) return;
    stopping = true;
    void sdk.shutdown().catch(() => {});
  });
}
