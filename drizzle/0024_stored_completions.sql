CREATE TABLE "stored_completions" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"completion_id" text NOT NULL,
	"model" text NOT NULL,
	"completion" jsonb NOT NULL,
	"messages" jsonb NOT NULL,
	"metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "stored_completions_id_idx" ON "stored_completions" USING btree ("account_id","completion_id");--> statement-breakpoint
CREATE INDEX "stored_completions_list_idx" ON "stored_completions" USING btree ("account_id","seq");--> statement-breakpoint
CREATE INDEX "stored_completions_created_idx" ON "stored_completions" USING btree ("created_at");