/**
 * `node --import ./services/platform/observability/register.ts …`: starts
 * tracing before anything else loads, only when an OTLP endpoint is set.
 * Without one nothing is imported or hooked: tracing costs nothing.
 */
import { tracingEnabled } from "../config.ts";

if (tracingEnabled()) {
  const { startTracing } = await import("./tracing.ts");
  await startTracing();
}
