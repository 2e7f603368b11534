import { ConnectError } from "@connectrpc/connect";
import { fromConnectError } from "../../http-errors.ts";

/** A service's 4xx verdict on what a member asked: shown on the page, never a 500. */
export interface Refusal {
  status: number;
  code: string;
  /** The service's merchant-facing sentence ("amount: must be …"): the API shows the same. */
  message: string;
  /** The field it names ("amount: …"), so a form can show it beside that field. */
  field: string | undefined;
}

/**
 * The REST API's reading of an RPC failure (http-errors.ts), kept when it is
 * the member's to fix (4xx); anything else (a broken call, a fault of ours)
 * is rethrown for the page guard, which answers 503 or a generic 500 page.
 */
export function refusalOf(err: unknown): Refusal {
  if (!(err instanceof ConnectError)) throw err;
  const http = fromConnectError(err);
  if (http.status < 400 || http.status >= 500) throw err;
  const field = /^([A-Za-z][A-Za-z0-9]*): /.exec(http.message)?.[1];
  return { status: http.status, code: http.code, message: http.message, field };
}
