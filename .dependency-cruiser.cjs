/**
 * The house rules (issue 10), checked in CI by `npm run lint:architecture`:
 * layers point down only (cli → gateway/workers → services → platform), the
 * platform knows no domain, the gateway sees only contracts, and nothing cycles.
 * (process.env outside services/platform/config.ts is caught by .ci/no-process-env.)
 * TypeScript 7 has no compiler API yet, so swc parses the sources.
 */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle means two modules are one; split out what both need.",
      from: {},
      to: { circular: true },
    },
    {
      name: "services-do-not-import-upper-layers",
      severity: "error",
      comment: "services/ is the bottom layer: the gateway, workers and CLI depend on it, never the other way.",
      from: { path: "^services/" },
      to: { path: "^(gateway|workers|cli)/" },
    },
    {
      name: "platform-knows-no-domain",
      severity: "error",
      comment: "services/platform/ is shared plumbing; domains register themselves with it from the composition root.",
      from: { path: "^services/platform/" },
      to: { path: "^services/(?!platform/)" },
    },
    {
      name: "charges-know-no-purpose",
      severity: "error",
      comment: "A settled charge's outcome goes to the handler of its purpose, registered at wiring (charge-outcomes.ts): charges/ never reaches into what it pays for.",
      from: { path: "^services/subscriptions/charges/" },
      to: { path: "^services/subscriptions/(renewals|change-sessions|refunds|customer)/|^services/subscriptions/(first-payment|charge-outcomes|ports|approve-authorization|cancel-subscription)\\.ts$" },
    },
    {
      name: "gateway-imports-only-contracts",
      severity: "error",
      comment: "The gateway speaks to services over RPC: it may import platform code and each domain's (or sub-domain's) contract.ts, never entities or use cases.",
      from: { path: "^gateway/" },
      to: { path: "^services/(?!platform/|[a-z-]+/contract\\.ts$|[a-z-]+/[a-z-]+/contract\\.ts$)" },
    },
    {
      name: "gateway-loads-no-orm",
      severity: "error",
      comment:
        "A gateway process loads no ORM, not even through a platform module it imports: error classes and types it needs live in contract modules (issue 22). Reachable, not only direct.",
      from: { path: "^gateway/" },
      to: { path: "@mikro-orm/", reachable: true },
    },
    {
      name: "domains-talk-through-contracts",
      severity: "error",
      comment:
        "A domain uses another domain through its contract.ts, or through the few modules that domain publishes for others (listed here, each for a reason), never its internals; what must cross otherwise is wired in the composition root (services/routes.ts, e.g. the wallet's accountCredited hook).",
      from: { path: "^services/([a-z-]+)/" },
      to: {
        path: "^services/[a-z-]+/",
        pathNot: [
          "^services/$1/",
          "^services/platform/",
          "^services/[a-z-]+/contract\\.ts$",
          "^services/[a-z-]+/[a-z-]+/contract\\.ts$",
          // The outbox: every domain records its events in its own transaction.
          "^services/events/(record-event|entities)\\.ts$",
          // Plans are read in the subscription's transaction (one database; the catalog owns the table).
          "^services/catalog/entities\\.ts$",
          // The emails worker renders from the subscriptions' settings and ports (one deployment unit with them).
          "^services/subscriptions/(ports|settings/billing-settings|renewals/billing-policy)\\.ts$",
          // Reconciliation reads every domain's tables; the wallet's operator RPC runs it.
          "^services/reconciliation/reconcile\\.ts$",
          // Address derivation is shared by deposit addresses (orders) and payout checks.
          "^services/orders/addresses/",
        ],
      },
    },
    {
      name: "workers-import-no-gateway",
      severity: "error",
      from: { path: "^workers/" },
      to: { path: "^(gateway|cli)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|proto/gen)" },
    tsPreCompilationDeps: true,
    moduleSystems: ["es6"],
    parser: "swc",
  },
};
