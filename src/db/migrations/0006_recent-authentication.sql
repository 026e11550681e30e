-- CONTRACT §16: adding or changing a way to sign in needs a factor proved within the last
-- 10 minutes. A session's sign-in is its created_at; POST me/reauthenticate stamps this.
ALTER TABLE "sessions" ADD COLUMN "reauthenticated_at" timestamp with time zone;
