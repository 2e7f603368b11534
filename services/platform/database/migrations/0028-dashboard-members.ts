import { Migration } from "@mikro-orm/migrations";

/**
 * The merchant dashboard (issue 24): team members who log in with a password
 * (argon2id, as wallet passwords) and a TOTP code (secret encrypted with
 * SECRETS_KEY; the last accepted time-step kept so a code works once), their
 * single-use invite (SHA-256 of the token, 7 days) and their recovery codes
 * (SHA-256, each used once). An email is one member across all merchants
 * (the login asks only for the email), removed members free theirs.
 */
export class Migration0028DashboardMembers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table members (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        email varchar(254) not null,
        role varchar(16) not null check (role in ('OWNER','ADMIN','DEVELOPER','SUPPORT','VIEWER')),
        status varchar(16) not null check (status in ('INVITED','ACTIVE','REMOVED')),
        password_hash text,
        totp_secret text,
        totp_enabled_at timestamptz,
        totp_last_step bigint,
        invite_token_hash varchar(64),
        invite_expires_at timestamptz,
        created_at timestamptz not null,
        removed_at timestamptz
      );
      create unique index members_live_email_key on members (lower(email)) where status <> 'REMOVED';
      create unique index members_invite_token_key on members (invite_token_hash) where invite_token_hash is not null;
      create index members_merchant_idx on members (merchant_id, created_at, id);

      create table member_recovery_codes (
        member_id uuid not null references members(id),
        code_hash varchar(64) not null,
        used_at timestamptz,
        primary key (member_id, code_hash)
      );
    `);
  }
}
