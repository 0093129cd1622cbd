-- Rate-limit buckets need no crash safety (a crash only forgets the last minute or two of counts), so their writes,
-- one per request of a limited key, skip the WAL. Drizzle has no UNLOGGED table, hence this step of its own.
ALTER TABLE "rate_buckets" SET UNLOGGED;
