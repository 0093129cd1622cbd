CREATE TABLE "rate_buckets" (
	"key_id" text NOT NULL,
	"minute" integer NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "rate_buckets_key_id_minute_pk" PRIMARY KEY("key_id","minute")
);
