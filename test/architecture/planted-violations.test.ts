/**
 * The house rules of `npm run lint:architecture` fail when broken (issue 22): each rule meets a planted violation
 * in a throwaway tree and must name it, and the same tree's lawful twin passes. A rule that cannot fail is no rule.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const repo = join(import.meta.dirname, "..", "..");

function plant(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "planted-"));
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  // Both roots exist in every tree, so the cruise reads the same two folders as in the repository.
  for (const [path, text] of Object.entries({ "gateway/empty.ts": "export {};\n", "services/empty.ts": "export {};\n", ...files })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function run(cwd: string, args: string[]) {
  const out = spawnSync(process.execPath, args, { cwd, encoding: "utf8", timeout: 60_000 });
  return { code: out.status, output: `${out.stdout}${out.stderr}` };
}

const depcruise = (cwd: string) =>
  run(cwd, [
    join(repo, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs"),
    "--config",
    join(repo, ".dependency-cruiser.cjs"),
    "gateway",
    "services",
  ]);
const sqlRule = (cwd: string, files: string[]) => run(cwd, [join(repo, ".ci/no-sql-outside-stores.ts"), ...files]);

describe("house rules meet planted violations", function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a gateway module that loads the ORM through a platform module fails gateway-loads-no-orm", () => {
    const dir = plant({
      "gateway/app.ts": `import { failure } from "../services/platform/errors.ts";\nexport const x = failure;\n`,
      "services/platform/errors.ts": `import { MikroORM } from "@mikro-orm/core";\nexport const failure = MikroORM;\n`,
    });
    dirs.push(dir);
    const { code, output } = depcruise(dir);
    expect(code).to.not.equal(0);
    expect(output).to.contain("gateway-loads-no-orm");
  });

  it("a domain importing another domain's internals fails domains-talk-through-contracts; its contract passes", () => {
    const bad = plant({
      "services/wallet/top-up.ts": `import { enqueue } from "../subscriptions/renewals/renewal-queue.ts";\nexport const x = enqueue;\n`,
      "services/subscriptions/renewals/renewal-queue.ts": `export const enqueue = 1;\n`,
    });
    const good = plant({
      "services/wallet/top-up.ts": `import { enqueue } from "../subscriptions/contract.ts";\nexport const x = enqueue;\n`,
      "services/subscriptions/contract.ts": `export const enqueue = 1;\n`,
    });
    dirs.push(bad, good);
    const broken = depcruise(bad);
    expect(broken.code).to.not.equal(0);
    expect(broken.output).to.contain("domains-talk-through-contracts");
    expect(depcruise(good).code, depcruise(good).output).to.equal(0);
  });

  it("SQL in a use case fails no-sql-outside-stores; the same statement in a repository, prose and HTML pass", () => {
    const statement = `export const due = (em: any) => em.execute(\`select id from subscriptions where status = 'ACTIVE'\`);\n`;
    const dir = plant({
      "services/subscriptions/renew.ts": statement,
      "services/subscriptions/subscription-store.ts": statement,
      "services/subscriptions/prose.ts": `// select a plan from the list, then update the card set\nexport const page = "<select name=plan></select> from";\n`,
      "services/subscriptions/lease.ts": "export const take = (em: any, table: string) => em.execute(`update ${table} set lease_until = now()`);\n",
      "services/subscriptions/entities.ts":
        "export const refunded = p.decimal().formula((a: string) => `(select sum(amount) from refunds where order_id = ${a}.id)`);\n",
    });
    dirs.push(dir);
    const useCase = sqlRule(dir, ["services/subscriptions/renew.ts"]);
    expect(useCase.code).to.equal(1);
    expect(useCase.output).to.match(/renew\.ts:1: SQL outside a repository: select id from subscriptions/);
    expect(sqlRule(dir, ["services/subscriptions/lease.ts"]).output, "an interpolated table name").to.contain(
      "lease.ts:1: SQL outside a repository: update ? set",
    );
    const lawful = sqlRule(dir, ["services/subscriptions/subscription-store.ts", "services/subscriptions/prose.ts", "services/subscriptions/entities.ts"]);
    expect(lawful.code, lawful.output).to.equal(0);
  });
});
