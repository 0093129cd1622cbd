CREATE TABLE "gemini_caches" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"model" text NOT NULL,
	"display_name" text,
	"content" jsonb NOT NULL,
	"tokens" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "gemini_caches_account_idx" ON "gemini_caches" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "gemini_caches_expires_idx" ON "gemini_caches" USING btree ("expires_at");