-- CONTRACT §18: an SSO connection may name an organization its sign-ins join. Deleting the
-- organization nulls organization_id alone (PostgreSQL 15's column list): drizzle-kit writes
-- a plain SET NULL, which would null tenant_id too, a NOT NULL column of this composite key.
ALTER TABLE "sso_connections" ADD COLUMN "organization_id" uuid;--> statement-breakpoint
ALTER TABLE "sso_connections" ADD CONSTRAINT "sso_connections_tenant_id_organization_id_organizations_tenant_id_id_fk" FOREIGN KEY ("tenant_id","organization_id") REFERENCES "public"."organizations"("tenant_id","id") ON DELETE SET NULL ("organization_id") ON UPDATE no action;
