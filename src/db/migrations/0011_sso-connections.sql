-- CONTRACT §12, enterprise SSO: the connections (OIDC client secret sealed like every *_enc
-- column), the domains each owns (one connection per domain of a tenant, by the primary
-- key), the identities keyed by (connection, subject), the SAML assertion ids accepted
-- once, and the connection an OAuth state was made for.
CREATE TABLE "sso_connections" (
	"tenant_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"domains" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"jit_provisioning" boolean DEFAULT true NOT NULL,
	"default_role" text DEFAULT 'Member' NOT NULL,
	"enforce" boolean DEFAULT false NOT NULL,
	"mfa_satisfied" boolean DEFAULT false NOT NULL,
	"oidc_issuer" text,
	"oidc_client_id" text,
	"oidc_scopes" text[],
	"oidc_client_secret_enc" text,
	"saml_idp_entity_id" text,
	"saml_idp_sso_url" text,
	"saml_idp_certificates" text[],
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sso_connections_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "sso_domains" (
	"tenant_id" uuid NOT NULL,
	"domain" text NOT NULL,
	"connection_id" uuid NOT NULL,
	CONSTRAINT "sso_domains_tenant_id_domain_pk" PRIMARY KEY("tenant_id","domain")
);
--> statement-breakpoint
CREATE TABLE "sso_identities" (
	"tenant_id" uuid NOT NULL,
	"connection_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"user_id" uuid NOT NULL,
	"email" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sso_identities_tenant_id_connection_id_subject_pk" PRIMARY KEY("tenant_id","connection_id","subject")
);
--> statement-breakpoint
CREATE TABLE "sso_saml_assertions" (
	"tenant_id" uuid NOT NULL,
	"connection_id" uuid NOT NULL,
	"assertion_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sso_saml_assertions_tenant_id_connection_id_assertion_id_pk" PRIMARY KEY("tenant_id","connection_id","assertion_id")
);
--> statement-breakpoint
ALTER TABLE "oauth_states" ADD COLUMN "connection_id" uuid;--> statement-breakpoint
ALTER TABLE "sso_connections" ADD CONSTRAINT "sso_connections_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_domains" ADD CONSTRAINT "sso_domains_tenant_id_connection_id_sso_connections_tenant_id_id_fk" FOREIGN KEY ("tenant_id","connection_id") REFERENCES "public"."sso_connections"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_identities" ADD CONSTRAINT "sso_identities_tenant_id_connection_id_sso_connections_tenant_id_id_fk" FOREIGN KEY ("tenant_id","connection_id") REFERENCES "public"."sso_connections"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_identities" ADD CONSTRAINT "sso_identities_tenant_id_user_id_users_tenant_id_id_fk" FOREIGN KEY ("tenant_id","user_id") REFERENCES "public"."users"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_saml_assertions" ADD CONSTRAINT "sso_saml_assertions_tenant_id_connection_id_sso_connections_tenant_id_id_fk" FOREIGN KEY ("tenant_id","connection_id") REFERENCES "public"."sso_connections"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sso_connections_tenant_created" ON "sso_connections" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "sso_domains_connection" ON "sso_domains" USING btree ("tenant_id","connection_id");--> statement-breakpoint
CREATE INDEX "sso_identities_user" ON "sso_identities" USING btree ("tenant_id","user_id");