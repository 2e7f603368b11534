import { Migration } from "@mikro-orm/migrations";

/**
 * The dashboard's API keys page lists each key with its last use. Stamped by
 * AuthenticateApiKey at most once a minute per key (gateways cache a lookup
 * up to a minute anyway), so a busy key costs no write per request.
 */
export class Migration0034ApiKeyLastUse extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table api_keys add column last_used_at timestamptz null;`);
  }
}
