CREATE TABLE "kept_thinking" (
	"account_id" integer NOT NULL,
	"call_id" text NOT NULL,
	"blocks" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "kept_thinking_account_id_call_id_pk" PRIMARY KEY("account_id","call_id")
);
--> statement-breakpoint
CREATE INDEX "kept_thinking_created_idx" ON "kept_thinking" USING btree ("created_at");