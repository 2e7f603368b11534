import { expect } from "chai";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import { Router } from "@koa/router";
import { RoutersByPrefix } from "../../gateway/routers-by-prefix.ts";
import type { GatewayState } from "../../gateway/route.ts";

const TEMPLATES: [method: "get" | "post", template: string][] = [
  ["get", "/healthz"],
  ["get", "/api/v1/things"],
  ["post", "/api/v1/things"],
  ["get", "/api/v1/things/:id"],
  ["post", "/api/v1/things/:id/cancel"],
  ["get", "/api/v1/thing-kinds/:id"],
  ["get", "/admin/v1/things/:id"],
  ["get", "/receipts/:token.pdf"],
];

/** What a request gets: the route that answered (or none), and the status; a path no route serves falls through to 404. */
async function serve(mount: (app: Koa<GatewayState>, template: (t: string) => (ctx: Koa.Context) => void) => void) {
  const app = new Koa<GatewayState>();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = (err as { status?: number }).status ?? 500;
      ctx.body = "error";
    }
  });
  mount(app, (t) => (ctx) => {
    ctx.body = `${t} ${JSON.stringify((ctx as unknown as { params: object }).params)}`;
  });
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = "fell through";
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function answers(server: Server, requests: [string, string][]): Promise<string[]> {
  const { port } = server.address() as AddressInfo;
  const out: string[] = [];
  for (const [method, path] of requests) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    out.push(`${method} ${path} → ${res.status} ${await res.text()}`);
  }
  return out;
}

describe("the API's routers by path prefix", () => {
  it("answers every request exactly as one router with all the routes does: case, trailing slash, 405, parameters, fall-through", async () => {
    const requests: [string, string][] = [
      ["GET", "/healthz"],
      ["GET", "/healthz/"],
      ["GET", "/HEALTHZ"],
      ["GET", "/api/v1/things"],
      ["POST", "/api/v1/things"],
      ["DELETE", "/api/v1/things"],
      ["GET", "/api/v1/things/abc"],
      ["GET", "/API/V1/Things/abc/"],
      ["POST", "/api/v1/things/abc"],
      ["POST", "/api/v1/things/abc/cancel"],
      ["GET", "/api/v1/things/abc/cancel"],
      ["GET", "/api/v1/thing-kinds/k"],
      ["GET", "/api/v1/thing-kinds"],
      ["GET", "/api/v1/other"],
      ["GET", "/api//v1/things"],
      ["GET", "/admin/v1/things/x"],
      ["GET", "/receipts/r1.pdf"],
      ["GET", "/receipts/r1.txt"],
      ["GET", "/"],
    ];
    const one = await serve((app, handler) => {
      const router = new Router<GatewayState>();
      for (const [method, t] of TEMPLATES) router[method](t, handler(t));
      app.use(router.routes());
      app.use(router.allowedMethods({ throw: true }));
    });
    const grouped = await serve((app, handler) => {
      const routers = new RoutersByPrefix();
      for (const [method, t] of TEMPLATES) routers.routerFor(t)[method](t, handler(t));
      app.use(routers.middleware());
    });
    try {
      const expected = await answers(one, requests);
      // The comparison means something only if the cases differ from each other.
      expect(new Set(expected.map((a) => a.split(" → ")[1]!.slice(0, 3)))).to.include.members(["200", "404", "405"]);
      expect(await answers(grouped, requests)).to.deep.equal(expected);
    } finally {
      one.close();
      grouped.close();
    }
  });

  it("refuses at start a route without a literal prefix of its own, which could serve a group's requests", () => {
    for (const template of ["/:anything", "/api/:version/things", "/api/v1/:kind"]) {
      const routers = new RoutersByPrefix();
      routers.routerFor("/api/v1/things").get("/api/v1/things", () => {});
      routers.routerFor(template).get(template, () => {});
      expect(() => routers.middleware(), template).to.throw(/could match requests of the group \/api\/v1\/things/);
    }
  });
});
