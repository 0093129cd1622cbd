CREATE TABLE "stored_items" (
	"item_id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"channel_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "stored_items_created_idx" ON "stored_items" USING btree ("created_at");