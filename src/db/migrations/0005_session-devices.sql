-- The new-device check (CONTRACT §9) walks a user's distinct (ip, user agent) pairs in this
-- index, one probe a pair, where it read every session of the user (49 ms at 100,000
-- sessions). Its first two columns serve what sessions_tenant_user served. Building it
-- blocks writes to sessions meanwhile; on a large table, build it first with
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS and the definition below.
CREATE INDEX IF NOT EXISTS "sessions_tenant_user_device" ON "sessions" USING btree ("tenant_id","user_id",coalesce("ip", ''),coalesce("user_agent", ''),"expires_at");--> statement-breakpoint
DROP INDEX "sessions_tenant_user";
