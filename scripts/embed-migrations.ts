/**
 * Writes src/db/migrations.gen.ts from drizzle/ so the migrations are part of the bundle and of the compiled binary
 * (a single executable has no drizzle/ folder beside it). Run by `bun run db:generate`; a test fails when stale.
 */
import { renderMigrations } from '../src/db/migrations-source'

const out = new URL('../src/db/migrations.gen.ts', import.meta.url)
await Bun.write(out, await renderMigrations(new URL('../drizzle/', import.meta.url)))
console.log(`wrote ${out.pathname}`)
