/**
 * Fax images per rendering variant instead of one per job.
 *
 * Recipients of one job may see different pages: each gets a cover page filled with its own
 * properties, and a header line may print the recipient's number (%#) or personalisation (%K).
 * Recipients whose pages come out identical share one image (render-fax-job.ts groups them).
 *  - fax_images: one TIFF-F per (job, variant), with the G4 size and the preflight of each page;
 *  - recipients.fax_image_id: the image a recipient is sent;
 *  - job_fax_images (one image per job) is copied into fax_images as variant 0 and dropped.
 */
import { sql, type Kysely } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";

export async function up(db: Kysely<unknown>, t: MigrationDialect): Promise<void> {
  await db.schema
    .createTable("fax_images")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id").onDelete("cascade"))
    .addColumn("variant", "integer", (c) => c.notNull())
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("content", t.blob, (c) => c.notNull())
    .addColumn("pages", "integer", (c) => c.notNull())
    .addColumn("page_sizes", "text", (c) => c.notNull())
    .addColumn("preflight", "text", (c) => c.notNull())
    .addColumn("size_bytes", "integer", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("fax_images_job_variant", ["job_id", "variant"])
    .execute();
  await db.schema.alterTable("recipients").addColumn("fax_image_id", "text").execute();

  await sql`
    insert into fax_images (id, job_id, variant, format, content, pages, page_sizes, preflight, size_bytes, created_at)
    select 'img_' || i.job_id || '_0', i.job_id, 0, i.format, i.content, i.pages, coalesce(j.page_sizes, '[]'), '[]', i.size_bytes, i.created_at
    from job_fax_images i join jobs j on j.id = i.job_id
  `.execute(db);
  await sql`
    update recipients set fax_image_id = 'img_' || job_id || '_0'
    where job_id in (select job_id from job_fax_images)
  `.execute(db);
  await db.schema.dropTable("job_fax_images").execute();
}
