-- Trigram matching for GET audit `search` (a substring search served by an index).
-- pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "audit_search_trgm" ON "audit_events" USING gin ((action || ' ' || coalesce(email, '') || ' ' || metadata::text) gin_trgm_ops);
