CREATE TABLE "interactions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"interaction" jsonb NOT NULL,
	"input" jsonb NOT NULL,
	"previous_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "interactions_account_idx" ON "interactions" USING btree ("account_id");