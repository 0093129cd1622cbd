/**
 * `GET /docs/json` and `GET /docs`: the OpenAPI document and a page that reads it. The document is generated from the
 * routes' schemas when the code changes (`bun run openapi`, scripts/openapi-doc.ts; a test fails when the committed
 * file is stale) and served here as committed: the server carries no generator (@elysiajs/swagger and the 31 modules
 * it loads) to describe itself. The page is self-contained (the plugin's page loaded its UI from a CDN), so it works
 * on a machine with no internet.
 * @module
 */
import { Elysia } from 'elysia'
import committed from '../../openapi/openapi.json' with { type: 'file' }
import html from './api-docs.html' with { type: 'text' }

// The document is imported as a file (a path, embedded in a compiled binary) and sent from it when asked for: as a
// module of text its 600 KB cost every server ~3 MB of memory from the start (the source, its parse and the
// string), for a route few requests reach. The page is small and kept as text. (TypeScript types the imports as a
// parsed value and an HTML bundle.)
const docPath = committed as unknown as string
const page = html as unknown as string

export const apiDocs = () =>
	new Elysia({ name: 'api-docs' })
		.get('/docs/json', () => new Response(Bun.file(docPath), { headers: { 'content-type': 'application/json; charset=utf-8' } }), { detail: { hide: true } })
		.get('/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
