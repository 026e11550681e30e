ALTER TABLE "applications" ADD COLUMN "token_endpoint_auth_method" text;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "jwks" jsonb;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "jwks_uri" text;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "require_par" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "require_dpop" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "token_exchange" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "profile" text;