import { writeFileSync } from "node:fs";
import { statusMachinesDoc } from "./status-machines-doc.ts";

// npm run docs:machines: docs/status-machines.md from the code's tables.
writeFileSync(new URL("../docs/status-machines.md", import.meta.url), statusMachinesDoc());
