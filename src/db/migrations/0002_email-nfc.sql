CREATE TABLE "email_conflicts" (
	"tenant_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"email_normalized" text NOT NULL,
	"nfc" text NOT NULL,
	CONSTRAINT "email_conflicts_tenant_id_user_id_pk" PRIMARY KEY("tenant_id","user_id")
);
--> statement-breakpoint
-- Emails are now compared in their NFC form (CONTRACT §8). Addresses stored before were
-- trimmed and lower-cased only, so an NFD spelling and an NFC one could be two accounts.
-- Live accounts whose addresses collide once normalised are reported in email_conflicts
-- and keep their address; every other row is rewritten to NFC.
INSERT INTO "email_conflicts" ("tenant_id", "user_id", "email_normalized", "nfc")
SELECT u."tenant_id", u."id", u."email_normalized", normalize(u."email_normalized", NFC)
FROM "users" u
WHERE u."deleted_at" IS NULL
  AND EXISTS (
    SELECT 1 FROM "users" o
    WHERE o."tenant_id" = u."tenant_id" AND o."id" <> u."id" AND o."deleted_at" IS NULL
      AND normalize(o."email_normalized", NFC) = normalize(u."email_normalized", NFC)
  );
--> statement-breakpoint
UPDATE "users" SET "email_normalized" = normalize("email_normalized", NFC)
WHERE "email_normalized" IS NOT NFC NORMALIZED
  AND NOT EXISTS (
    SELECT 1 FROM "email_conflicts" c WHERE c."tenant_id" = "users"."tenant_id" AND c."user_id" = "users"."id"
  );
--> statement-breakpoint
UPDATE "users" SET "email" = normalize("email", NFC)
WHERE "email" IS NOT NFC NORMALIZED
  AND NOT EXISTS (
    SELECT 1 FROM "email_conflicts" c WHERE c."tenant_id" = "users"."tenant_id" AND c."user_id" = "users"."id"
  );
--> statement-breakpoint
UPDATE "invites" SET "email" = normalize("email", NFC), "email_normalized" = normalize("email_normalized", NFC)
WHERE "email" IS NOT NFC NORMALIZED OR "email_normalized" IS NOT NFC NORMALIZED;
--> statement-breakpoint
UPDATE "idp_identities" SET "email" = normalize("email", NFC) WHERE "email" IS NOT NFC NORMALIZED;
