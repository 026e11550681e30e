CREATE TABLE "identities" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"source" text NOT NULL,
	"subject" text NOT NULL,
	"user_id" uuid NOT NULL,
	"email" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "identities_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
-- One identities table for every outside source (CONTRACT §19): the SPEC's identity
-- provider's links (its issuer as the source) and the SSO connections' (the connection's id
-- as text) are copied in, each row keeping its created_at, before their tables go. Each
-- identity gets its own id here, from the column's default.
INSERT INTO "identities" ("tenant_id", "kind", "source", "subject", "user_id", "email", "created_at")
SELECT "tenant_id", 'idp', "issuer", "subject", "user_id", "email", "created_at" FROM "idp_identities";
--> statement-breakpoint
INSERT INTO "identities" ("tenant_id", "kind", "source", "subject", "user_id", "email", "created_at")
SELECT "tenant_id", 'sso', "connection_id"::text, "subject", "user_id", "email", "created_at" FROM "sso_identities";
--> statement-breakpoint
DROP TABLE "idp_identities" CASCADE;--> statement-breakpoint
DROP TABLE "sso_identities" CASCADE;--> statement-breakpoint
ALTER TABLE "identities" ADD CONSTRAINT "identities_tenant_id_user_id_users_tenant_id_id_fk" FOREIGN KEY ("tenant_id","user_id") REFERENCES "public"."users"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "identities_key" ON "identities" USING btree ("tenant_id","kind","source","subject");--> statement-breakpoint
CREATE INDEX "identities_user" ON "identities" USING btree ("tenant_id","user_id");
