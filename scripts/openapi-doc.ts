/**
 * Builds the OpenAPI document the server serves at /docs/json, from an app on a throwaway in-memory database.
 * Shared by `bun run openapi` (writes openapi/openapi.json) and the test that fails when the committed file is stale.
 */
import { createApp } from '../src/app'
import { loadEnv } from '../src/config/env'
import { openDb } from '../src/db/client'
import { silentLogger } from '../src/lib/log'
import { createServices } from '../src/services'

export async function buildOpenApiDocument(): Promise<string> {
	const db = await openDb(undefined, 'memory://')
	const svc = await createServices(loadEnv({ SECRET_KEY: 'openapi-generation-only-key' }), { db, log: silentLogger })
	try {
		const res = await createApp(svc).handle(new Request('http://localhost/docs/json'))
		if (!res.ok) throw new Error(`/docs/json answered ${res.status}`)
		return JSON.stringify(await res.json(), null, '\t') + '\n'
	} finally {
		await svc.close()
		await db.sql.close()
	}
}
