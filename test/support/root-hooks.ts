import { dropTemplate } from "./database.ts";
import { infrastructure } from "./infrastructure.ts";
import { undocumentedAnswers } from "./answers-seen.ts";

/** Mocha root hooks: shared infrastructure is torn down once, after every file. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await dropTemplate();
    await (await infrastructure().catch(() => undefined))?.stop();
    // Every answer seen in the run must be in the OpenAPI document (statuses per operation).
    const undocumented = undocumentedAnswers();
    if (undocumented.length) throw new Error(`answers missing from the OpenAPI document:\n${undocumented.join("\n")}`);
  },
};
