import { expect } from "chai";
import pg from "pg";
import { partitionKeyRange, UTC_MICROS } from "../../services/platform/database/partition-key-range.ts";
import { infrastructure } from "../support/infrastructure.ts";

describe("partition key ranges (rows named by key and the range of their partition keys)", () => {
  it("takes the least and the greatest of fixed-width UTC keys, across a month and a year", () => {
    const keys = ["2026-12-01T00:00:00.000Z", "2026-11-30T23:59:59.999Z", "2027-01-01T00:00:00.001Z", "2026-12-15T08:00:00.000Z"];
    expect(partitionKeyRange(keys)).to.deep.equal(["2026-11-30T23:59:59.999Z", "2027-01-01T00:00:00.001Z"]);
    expect(partitionKeyRange(["2026-11-30T23:59:59.999Z"])).to.deep.equal(["2026-11-30T23:59:59.999Z", "2026-11-30T23:59:59.999Z"]);
  });

  it("refuses keys of another width (text order would not be time order) and an empty list", () => {
    expect(() => partitionKeyRange(["2026-11-30T23:59:59.999Z", "2026-11-30 23:59:59.99+00"])).to.throw(/fixed-width/);
    expect(() => partitionKeyRange([])).to.throw(/no keys/);
  });

  it("Postgres's UTC_MICROS text is fixed-width, sorts as time and reads back as the same instant, to the microsecond", async () => {
    const client = new pg.Client({ connectionString: (await infrastructure()).databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ t: string; text: string; same: boolean }>(
        `select t::text as t, to_char(t at time zone 'UTC', ${UTC_MICROS}) as text,
                to_char(t at time zone 'UTC', ${UTC_MICROS})::timestamptz = t as same
           from unnest(array['2026-11-30 23:59:59.999999+00', '2026-12-01 00:00:00+00', '2026-12-01 00:00:00.000001+00',
                             '2026-12-01 01:00:00.5+01', '2027-01-01 00:00:00.26+00']::timestamptz[]) as t
          order by t`,
      );
      expect(rows.map((r) => r.same)).to.deep.equal([true, true, true, true, true]);
      const texts = rows.map((r) => r.text);
      expect(new Set(texts.map((t) => t.length)).size).to.equal(1);
      expect([...texts].sort()).to.deep.equal(texts);
      expect(texts[0]).to.equal("2026-11-30T23:59:59.999999Z");
      expect(texts[3]).to.equal("2026-12-01T00:00:00.500000Z");
      expect(partitionKeyRange(texts)).to.deep.equal([texts[0], texts[4]]);
    } finally {
      await client.end();
    }
  });
});
