import { dropTemplate } from "./database.ts";
import { infrastructure } from "./infrastructure.ts";

/** Mocha root hooks: shared infrastructure is torn down once, after every file. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await dropTemplate();
    await (await infrastructure().catch(() => undefined))?.stop();
  },
};
