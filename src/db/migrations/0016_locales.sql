-- CONTRACT §20: a tenant's default locale and the locales it offers (null: every supported
-- one, so a catalogue added later is offered without a migration), and each user's locale
-- (null until set by PATCH me, PATCH users, the account page, SCIM or import).
ALTER TABLE "tenants" ADD COLUMN "default_locale" text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "locales" text[];--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "locale" text;