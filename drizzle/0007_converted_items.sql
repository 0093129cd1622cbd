CREATE TABLE "converted_items" (
	"item_id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"item" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "converted_items_created_idx" ON "converted_items" USING btree ("created_at");