ALTER TABLE "conversations" ADD COLUMN "busy_by" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "busy_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "stored_responses" ADD COLUMN "conversation_id" text;