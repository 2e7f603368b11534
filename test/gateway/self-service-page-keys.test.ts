import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import { createWalletUser, type WalletUserFixture } from "../support/subscriptions.ts";
import { logIn, pageSession, type PageSessionClient } from "../support/page-session.ts";

/**
 * `?done=` picks the notice the self-service page shows after a change. It is
 * request-controlled: a name of an Object.prototype member used to find that
 * member (500 page for constructor, __proto__, valueOf, __defineGetter__;
 * "[object Object]" shown for toString, toLocaleString).
 */
describe("self-service page: a ?done= from the URL finds only the page's own notices", () => {
  let user: WalletUserFixture;
  let page: PageSessionClient;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    user = await createWalletUser(sys);
    page = await pageSession(sys.baseUrl, "/wallet/subscriptions");
    await logIn(page, user.email, user.password);
  });

  const PROTOTYPE_KEYS = ["constructor", "__proto__", "valueOf", "__defineGetter__", "toString", "toLocaleString", "hasOwnProperty", "isPrototypeOf"];

  for (const key of PROTOTYPE_KEYS) {
    it(`?done=${key}: the logged-in page (200), with no notice and no "[object Object]"`, async () => {
      const res = await page.get(`/wallet/subscriptions?done=${encodeURIComponent(key)}&subscriptionId=00000000-0000-4000-8000-000000000000`);
      expect(res.status, res.html.slice(0, 300)).to.equal(200);
      expect(res.html).to.contain(user.email); // the logged-in page, not the login form
      expect(res.html).not.to.contain("[object Object]");
      expect(res.html).not.to.contain('role="status"');
    });
  }

  it("?done=cancelled still shows its notice", async () => {
    const res = await page.get("/wallet/subscriptions?done=cancelled&subscriptionId=00000000-0000-4000-8000-000000000000");
    expect(res.status).to.equal(200);
    expect(res.html).to.contain("The subscription is cancelled. Nothing more will be charged.");
  });
});
