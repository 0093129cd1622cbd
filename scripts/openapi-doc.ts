/**
 * Builds the OpenAPI document from the routes' schemas: an app on a throwaway in-memory database, with
 * @elysiajs/swagger generating /docs/json, tidied (openapi-tidy.ts), with the streamed and binary answers routes do
 * not declare (openapi-streams.ts) and the media types their schemas cannot say (openapi-media.ts), made valid OpenAPI
 * 3.1 last (openapi-31.ts: the plugin says 3.0.3 of JSON Schema only 3.1 takes). Shared by
 * `bun run openapi` (writes openapi/openapi.json, which the server serves: src/http/api-docs.ts) and the test that
 * fails when the committed file is stale. The generator is loaded here only, never by the server.
 */
import { swagger } from '@elysiajs/swagger'
import { deferredModules } from '../src/app-deferred'
import { createApp } from '../src/app'
import { loadEnv } from '../src/config/env'
import { openDb } from '../src/db/client'
import { silentLogger } from '../src/lib/log'
import { createServices } from '../src/services'
import { toOpenApi31 } from './openapi-31'
import { describeMedia } from './openapi-media'
import { applySecurity } from './openapi-security'
import { describeStreams } from './openapi-streams'
import { tidyOpenApi } from './openapi-tidy'

export const API_VERSION = '0.1.0'

const generator = () =>
	swagger({
		path: '/docs',
		exclude: ['/docs', '/docs/json'],
		// No static files are served; the Live API's paths have dots in them (`/ws/google.ai.generativelanguage.v1…`).
		excludeStaticFile: false,
		documentation: {
			info: {
				title: 'Switchboard',
				version: API_VERSION,
				description: 'Model gateway: OpenAI chat-completions, Anthropic messages and Gemini protocols for every model, plus the management API.',
			},
			tags: [
				{ name: 'Health', description: 'Readiness' },
				{ name: 'OpenAI', description: 'OpenAI-compatible endpoints (base URL {root}/v1)' },
				{ name: 'Anthropic', description: 'Anthropic-compatible endpoints (base URL {root})' },
				{ name: 'Gemini', description: 'Gemini native protocol (/v1beta/models/*, also /v1/models/*:method)' },
				{ name: 'Midjourney', description: 'midjourney-proxy task API passthrough (/mj/*)' },
				{ name: 'Suno', description: 'Suno task API passthrough (/suno/*)' },
				{ name: 'Console', description: 'Web console sessions, users and settings (cookie session + x-csrf-token, or ADMIN_KEY)' },
				{ name: 'Management', description: 'Accounts, API keys, usage, channels and prices (Authorization: Bearer $ADMIN_KEY)' },
			],
			// The gateway that serves the document (OpenAPI's default, written out: a document without servers is an error to
			// linters such as Redocly's).
			servers: [{ url: '/' }],
			// Each operation's own requirements are set afterwards (openapi-security.ts).
			components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
			security: [{ bearer: [] }],
		},
	})

export async function buildOpenApiDocument(): Promise<string> {
	const db = await openDb(undefined, 'memory://')
	const svc = await createServices(loadEnv({ SECRET_KEY: 'openapi-generation-only-key' }), { db, log: silentLogger })
	try {
		const res = await createApp(svc, { docs: generator(), deferred: deferredModules }).handle(new Request('http://localhost/docs/json'))
		if (!res.ok) throw new Error(`/docs/json answered ${res.status}`)
		const doc = applySecurity(describeMedia(describeStreams(tidyOpenApi(await res.json()) as Record<string, unknown>)))
		return JSON.stringify(toOpenApi31(doc), null, '\t') + '\n'
	} finally {
		await svc.close()
		await db.sql.close()
	}
}
