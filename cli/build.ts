/**
 * `npm run build`: compiles the roles to JavaScript in dist/ and copies every
 * other file of the source folders beside its module (page views, email
 * templates, a word list: read at run time through `new URL(…, import.meta.url)`).
 * The npm start scripts and the image run dist/: a process that loads any .ts
 * file also loads Node's type stripper (an swc build in WebAssembly), about
 * 22 MiB of every role's resident memory. Tests, the bench's tools and the
 * operator CLI run the sources as they are.
 *
 * dist/ is written over, never deleted first: roles started one after another
 * from one checkout (`npm run start:services`, then `start:gateway`) each build,
 * and a running role still imports modules and reads templates from dist/.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
/** tsconfig.build.json's `include`, less proto/gen (generated code only). */
const SOURCES = ["cli", "services", "gateway", "workers"];

const tsc = spawnSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", path.join(root, "tsconfig.build.json")], {
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
for (const folder of SOURCES) {
  for (const entry of readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith(".ts")) continue;
    const relative = path.relative(root, path.join(entry.parentPath, entry.name));
    cpSync(path.join(root, relative), path.join(root, "dist", relative));
  }
}
