# One image for every role; the command picks the role (gateway, a service, a worker group).

# Build: the roles compiled to JavaScript (npm run build → dist/). A process that loads any .ts file also loads
# Node's type stripper: about 22 MiB of resident memory at start in every role (docs/operations.md, Processes and scaling).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --no-audit --no-fund
COPY proto ./proto
COPY services ./services
COPY gateway ./gateway
COPY workers ./workers
COPY cli ./cli
RUN npm run build

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
USER node
# 3000 public API (gateway), 50051 Connect/gRPC (services), 9464 /metrics /healthz /readyz (every role)
EXPOSE 3000 50051 9464
# register.js starts OpenTelemetry before anything loads, only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
# Node 24 keeps its peak heap resident: a 32 MiB young generation and slower heap growth keep RSS near the live set (README, Benchmarks).
# The same CLI as `npx billing` in the project: `migrate`, `start <role>` and the operator commands.
ENTRYPOINT ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--import", "./dist/services/platform/observability/register.js", "dist/cli/billing.js"]
CMD ["start", "gateway"]
