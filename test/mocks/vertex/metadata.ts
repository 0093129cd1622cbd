/**
 * Mock Google Compute Engine metadata server (https://cloud.google.com/compute/docs/access/authenticate-workloads#applications,
 * https://cloud.google.com/compute/docs/metadata/querying-metadata): every request must carry `Metadata-Flavor: Google`
 * (else 403, as the server answers), every answer carries it back.
 * - `GET /computeMetadata/v1/instance/service-accounts/default/token` → `{access_token, expires_in, token_type: "Bearer"}`,
 *   a new `ya29.c.mock-meta-N` token living `ttl` seconds; 404 when no service account is attached;
 * - `GET /computeMetadata/v1/project/project-id` → the project id as text.
 * The Vertex mock takes its tokens while unexpired (`accepts`). Given as `GCE_METADATA_HOST` (host:port).
 * @module
 */

export type GoogleMetadataMock = {
	/** `127.0.0.1:PORT`, as `GCE_METADATA_HOST` takes it (no scheme). */
	readonly host: string
	readonly project: string
	/** Tokens issued so far. */
	readonly tokenFetches: number
	/** Every request's path and its Metadata-Flavor header, in order. */
	readonly requests: Array<{ path: string; flavor: string | null }>
	/** Seconds each new token lives; default 3599. */
	ttl: number
	/** Each token request waits this long first (to let concurrent calls meet it). */
	delayMs: number
	/** No service account attached: the token answers 404. */
	noServiceAccount: boolean
	accepts(token: string): boolean
	revokeTokens(): void
	stop(): Promise<void>
}

const flavored = (body: BodyInit | null, init: { status?: number; type?: string } = {}) =>
	new Response(body, { status: init.status ?? 200, headers: { 'metadata-flavor': 'Google', 'content-type': init.type ?? 'application/text' } })

/** @example const meta = startGoogleMetadataMock('proj-ambient'); process.env.GCE_METADATA_HOST = meta.host */
export function startGoogleMetadataMock(project: string): GoogleMetadataMock {
	const tokens = new Map<string, number>()
	const requests: GoogleMetadataMock['requests'] = []
	let issued = 0

	async function handle(req: Request): Promise<Response> {
		const path = new URL(req.url).pathname
		requests.push({ path, flavor: req.headers.get('metadata-flavor') })
		if (req.headers.get('metadata-flavor') !== 'Google') return flavored('Missing Metadata-Flavor:Google header.', { status: 403 })
		if (path === '/computeMetadata/v1/project/project-id') return flavored(project)
		if (path === '/computeMetadata/v1/instance/service-accounts/default/token') {
			if (mock.noServiceAccount) return flavored('Not Found', { status: 404 })
			if (mock.delayMs) await Bun.sleep(mock.delayMs)
			const token = `ya29.c.mock-meta-${++issued}`
			tokens.set(token, Date.now() + mock.ttl * 1000)
			return flavored(JSON.stringify({ access_token: token, expires_in: mock.ttl, token_type: 'Bearer' }), { type: 'application/json' })
		}
		return flavored('Not Found', { status: 404 })
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	// The knobs a test turns (`mock.ttl = 1`) are the object's own members, which the handlers read.
	const mock: GoogleMetadataMock = {
		ttl: 3599,
		delayMs: 0,
		noServiceAccount: false,
		host: `127.0.0.1:${server.port}`,
		project,
		requests,
		get tokenFetches() {
			return issued
		},
		accepts(token) {
			const until = tokens.get(token)
			return until !== undefined && until > Date.now()
		},
		revokeTokens() {
			tokens.clear()
		},
		async stop() {
			await server.stop(true)
		},
	}
	return mock
}
