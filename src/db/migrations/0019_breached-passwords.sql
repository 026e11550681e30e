ALTER TABLE "tenants" ADD COLUMN "breached_password_policy" text DEFAULT 'block' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_breached" boolean DEFAULT false NOT NULL;