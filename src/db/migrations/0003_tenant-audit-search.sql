-- The audit search index led by the tenant (a one-element array: GIN has no operator class
-- for a bare uuid without an extension), so that a tenant's search reads that tenant's
-- entries only, not those of every tenant whose events share the term's trigrams.
-- This builds a GIN index over the whole audit log and blocks writes to audit_events while
-- it builds (30 to 45 s per million events on 2 cores). On a large log, build it first with
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "audit_tenant_search_trgm" ON "audit_events"
--     USING gin ((ARRAY[tenant_id]), (action || ' ' || coalesce(email, '') || ' ' || metadata::text) gin_trgm_ops);
-- and this migration then finds it (README, Performance, Cost as data grows).
CREATE INDEX IF NOT EXISTS "audit_tenant_search_trgm" ON "audit_events" USING gin ((ARRAY[tenant_id]),(action || ' ' || coalesce(email, '') || ' ' || metadata::text) gin_trgm_ops);--> statement-breakpoint
DROP INDEX IF EXISTS "audit_search_trgm";
