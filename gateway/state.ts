/** What the gateway's middleware leave on ctx.state for the ones after them (imports nothing, so anything may use it). */
export interface GatewayState {
  merchantId?: string;
  requestId?: string;
  /** The validated body (defaults applied) and query. */
  body?: any;
  query?: any;
  /** http_route for a request the routers did not dispatch (the queue dashboard, a refused body): see http-metrics.ts. */
  metricsRoute?: string;
}
