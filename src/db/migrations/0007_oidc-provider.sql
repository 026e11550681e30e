-- CONTRACT §11: the OpenID Connect provider. applications and api_resources are what tenant
-- admins configure; oidc_models holds every model of oidc-provider (grants, codes, opaque
-- tokens, sessions, interactions, device codes), led by tenant_id so any instance serves
-- any step. Expired rows are pruned by `npm run purge`.
CREATE TABLE "api_resources" (
	"tenant_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"name" text NOT NULL,
	"identifier" text NOT NULL,
	"scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"access_token_ttl_seconds" integer DEFAULT 900 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "api_resources_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "applications" (
	"tenant_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"redirect_uris" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"post_logout_redirect_uris" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"backchannel_logout_uri" text,
	"first_party" boolean DEFAULT true NOT NULL,
	"allowed_scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"dynamic" boolean DEFAULT false NOT NULL,
	"client_secret_enc" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "applications_tenant_id_id_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "applications_client_id_unique" UNIQUE("client_id")
);
--> statement-breakpoint
CREATE TABLE "oidc_models" (
	"tenant_id" uuid NOT NULL,
	"model" text NOT NULL,
	"id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"grant_id" text,
	"user_code" text,
	"uid" text,
	"account_id" text,
	"client_id" text,
	"expires_at" timestamp with time zone,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "oidc_models_tenant_id_model_id_pk" PRIMARY KEY("tenant_id","model","id")
);
--> statement-breakpoint
ALTER TABLE "api_resources" ADD CONSTRAINT "api_resources_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_models" ADD CONSTRAINT "oidc_models_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_resources_tenant_identifier" ON "api_resources" USING btree ("tenant_id","identifier");--> statement-breakpoint
CREATE INDEX "api_resources_tenant_created" ON "api_resources" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "applications_tenant_created" ON "applications" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "oidc_models_grant" ON "oidc_models" USING btree ("tenant_id","grant_id") WHERE grant_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "oidc_models_user_code" ON "oidc_models" USING btree ("tenant_id","user_code") WHERE user_code IS NOT NULL;--> statement-breakpoint
CREATE INDEX "oidc_models_uid" ON "oidc_models" USING btree ("tenant_id","uid") WHERE uid IS NOT NULL;--> statement-breakpoint
CREATE INDEX "oidc_models_account" ON "oidc_models" USING btree ("tenant_id","account_id") WHERE account_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "oidc_models_client" ON "oidc_models" USING btree ("tenant_id","client_id") WHERE client_id IS NOT NULL;