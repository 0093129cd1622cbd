CREATE TABLE "stored_responses" (
	"response_id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"channel_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
