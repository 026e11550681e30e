ALTER TABLE "tenants" ADD COLUMN "captcha_provider" text;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "captcha_site_key" text;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "captcha_secret_enc" text;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "captcha_on" text[];