# One image for every role; the command picks the role (gateway, a service, a worker group).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY proto ./proto
COPY services ./services
COPY gateway ./gateway
COPY workers ./workers
COPY cli ./cli
USER node
# 3000 public API (gateway), 50051 Connect/gRPC (services), 9464 /metrics /healthz /readyz (every role)
EXPOSE 3000 50051 9464
# register.ts starts OpenTelemetry before anything loads, only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
# Node 24 keeps its peak heap resident: a 32 MiB young generation and slower heap growth keep RSS near the live set (README, Benchmarks).
ENTRYPOINT ["node", "--max-semi-space-size=32", "--heap-growing-percent=50", "--import", "./services/platform/observability/register.ts", "cli/billing.ts"]
CMD ["start", "gateway"]
