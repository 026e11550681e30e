ALTER TABLE "one_time_codes" ADD COLUMN "delivery" text;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "passwordless_method" text DEFAULT 'code' NOT NULL;