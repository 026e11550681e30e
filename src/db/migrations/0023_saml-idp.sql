ALTER TABLE "applications" ADD COLUMN "saml" jsonb;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "saml_entity_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "applications_tenant_saml_entity" ON "applications" USING btree ("tenant_id","saml_entity_id");