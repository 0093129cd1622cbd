CREATE TABLE "conversation_items" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"item_id" text NOT NULL,
	"item" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversation_items" ADD CONSTRAINT "conversation_items_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "conversation_items_item_idx" ON "conversation_items" USING btree ("conversation_id","item_id");--> statement-breakpoint
CREATE INDEX "conversation_items_seq_idx" ON "conversation_items" USING btree ("conversation_id","seq");