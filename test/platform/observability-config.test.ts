import { expect } from "chai";
import { ConfigError, loadConfig, tracingEnabled } from "../../services/platform/config.ts";

describe("config: operations settings", () => {
  it("METRICS_PORT defaults to 9464; 0 is allowed (off); a bad value is named", () => {
    expect(loadConfig({}).metricsPort).to.equal(9464);
    expect(loadConfig({ METRICS_PORT: "0" }).metricsPort).to.equal(0);
    expect(() => loadConfig({ METRICS_PORT: "x" })).to.throw(ConfigError, /METRICS_PORT/);
  });

  it("the queue prefix is hash-tagged for Redis Cluster", () => {
    expect(loadConfig({}).queuePrefix).to.equal("{billing}");
    expect(loadConfig({ QUEUE_PREFIX: "prod" }).queuePrefix).to.equal("{prod}");
    expect(loadConfig({ QUEUE_PREFIX: "{prod}" }).queuePrefix).to.equal("{prod}");
  });

  it("REDIS_CLUSTER_NODES is a host:port list", () => {
    expect(loadConfig({}).redisClusterNodes).to.deep.equal([]);
    expect(loadConfig({ REDIS_CLUSTER_NODES: "10.0.0.1:7000, redis-1.redis:7001" }).redisClusterNodes).to.deep.equal(["10.0.0.1:7000", "redis-1.redis:7001"]);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: "redis://a:1" })).to.throw(ConfigError, /REDIS_CLUSTER_NODES/);
  });

  it("QUEUE_DASHBOARD_WRITE defaults to read-only", () => {
    expect(loadConfig({}).queueDashboardWrite).to.equal(false);
    expect(loadConfig({ QUEUE_DASHBOARD_WRITE: "true" }).queueDashboardWrite).to.equal(true);
  });

  it("tracing is on only with an OTLP endpoint, and the standard switches turn it off", () => {
    expect(tracingEnabled({})).to.equal(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: "billing" })).to.equal(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).to.equal(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).to.equal(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).to.equal(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })).to.equal(false);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).tracing).to.equal(true);
  });
});
