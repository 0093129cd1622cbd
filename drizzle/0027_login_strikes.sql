CREATE TABLE "login_strikes" (
	"key" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "login_strikes_expires_idx" ON "login_strikes" USING btree ("expires_at");