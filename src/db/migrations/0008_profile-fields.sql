-- CONTRACT §14: the user's profile fields, null until set (PATCH users, SCIM, import), and
-- an index for SCIM's lookups by the client's own id. externalId is not unique (README).
ALTER TABLE "users" ADD COLUMN "display_name" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "given_name" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "family_name" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "external_id" text;--> statement-breakpoint
CREATE INDEX "users_tenant_external_id" ON "users" USING btree ("tenant_id","external_id") WHERE deleted_at IS NULL AND external_id IS NOT NULL;