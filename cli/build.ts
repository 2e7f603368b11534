/**
 * `npm run build`: compiles the roles to JavaScript in dist/ and copies the
 * files they read next to their modules (templates, a word list). The npm
 * start scripts and the image run dist/: a process that loads any .ts file
 * loads Node's type stripper too (an swc build in WebAssembly), about 26 MiB
 * of every role's resident memory. Tests, the bench's tools and the operator
 * CLI run the sources as they are.
 */
import { spawnSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Read at run time through `new URL(…, import.meta.url)`, so each sits beside its module in dist/ as in the sources. */
const ASSETS = ["gateway/pages/views", "services/emails/templates", "services/merchants/members/common-passwords.txt"];

rmSync(`${root}dist`, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.build.json`], { stdio: "inherit" });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
for (const asset of ASSETS) cpSync(`${root}${asset}`, `${root}dist/${asset}`, { recursive: true });
