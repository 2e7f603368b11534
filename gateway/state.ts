/** What the gateway's middleware leave on ctx.state for the ones after them (imports nothing, so anything may use it). */
export interface GatewayState {
  merchantId?: string;
  requestId?: string;
  /** The validated body (defaults applied) and query. */
  body?: any;
  query?: any;
}
