CREATE TABLE "message_threads" (
	"message_id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"channel_id" integer,
	"tokens" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "message_threads_created_idx" ON "message_threads" USING btree ("created_at");