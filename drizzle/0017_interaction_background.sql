ALTER TABLE "interactions" ADD COLUMN "events" jsonb;--> statement-breakpoint
ALTER TABLE "interactions" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;