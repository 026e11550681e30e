CREATE TABLE "hook_calls" (
	"tenant_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"hook_id" uuid NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	"duration_ms" integer NOT NULL,
	"status" integer,
	"test" boolean NOT NULL,
	"error" text,
	CONSTRAINT "hook_calls_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "hook_calls" ADD CONSTRAINT "hook_calls_tenant_id_hook_id_hooks_tenant_id_id_fk" FOREIGN KEY ("tenant_id","hook_id") REFERENCES "public"."hooks"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hook_calls_hook_at" ON "hook_calls" USING btree ("tenant_id","hook_id","at","id");