ALTER TABLE "social_connections" ADD COLUMN "apple_team_id" text;--> statement-breakpoint
ALTER TABLE "social_connections" ADD COLUMN "apple_key_id" text;--> statement-breakpoint
ALTER TABLE "social_connections" ADD COLUMN "apple_private_key_enc" text;