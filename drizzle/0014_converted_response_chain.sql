ALTER TABLE "converted_items" ADD COLUMN "previous_id" text;--> statement-breakpoint
ALTER TABLE "converted_items" ADD COLUMN "deleted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "converted_items_previous_idx" ON "converted_items" USING btree ("previous_id") WHERE "converted_items"."previous_id" IS NOT NULL;