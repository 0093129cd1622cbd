CREATE TABLE "gemini_file_parts" (
	"file_id" text NOT NULL,
	"offset" bigint NOT NULL,
	"data" text NOT NULL,
	CONSTRAINT "gemini_file_parts_file_id_offset_pk" PRIMARY KEY("file_id","offset")
);
--> statement-breakpoint
ALTER TABLE "gemini_file_parts" ADD CONSTRAINT "gemini_file_parts_file_id_tasks_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;