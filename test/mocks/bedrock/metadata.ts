/**
 * Mock AWS credential endpoints of a role, as the AWS SDKs meet them:
 * - the EC2 instance metadata service, IMDSv2 (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-metadata-security-credentials.html,
 *   https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html):
 *   `PUT /latest/api/token` with `X-aws-ec2-metadata-token-ttl-seconds` (1–21600, else 400) answers a session token;
 *   `GET /latest/meta-data/iam/security-credentials/` the role's name and `GET …/{role}`
 *   `{Code: "Success", LastUpdated, Type: "AWS-HMAC", AccessKeyId, SecretAccessKey, Token, Expiration}`, each only
 *   with `X-aws-ec2-metadata-token` a session token (else 401, as IMDSv2-only instances answer); 404 without a role;
 *   `GET /latest/meta-data/placement/availability-zone` the instance's zone (`zone`, default `us-east-2b`);
 * - the container credentials endpoint (https://docs.aws.amazon.com/sdkref/latest/guide/feature-container-credentials.html):
 *   `GET /v2/credentials/{id}` answers `{AccessKeyId, SecretAccessKey, Token, Expiration, RoleArn}` when
 *   `Authorization` is `containerToken` (else 401).
 * Each fetch issues new keys (`ASIA…`) living `ttl` seconds; the Bedrock mock takes them while unexpired (`keysFor`).
 * @module
 */
import type { IamKeys } from './sigv4'

export type AwsMetadataMock = {
	/** The IMDS endpoint (`AWS_EC2_METADATA_SERVICE_ENDPOINT`), also the container endpoint's origin. */
	readonly url: string
	/** A container credentials URL (`AWS_CONTAINER_CREDENTIALS_FULL_URI`). */
	readonly containerUri: string
	/** Credentials issued so far (IMDS and container). */
	readonly fetches: number
	/** Every request, in order: method, path and the headers that matter. */
	readonly requests: Array<{ method: string; path: string; headers: Record<string, string> }>
	/** Seconds each new key set lives; default 3600. */
	ttl: number
	/** Each credentials request waits this long first (to let concurrent calls meet it). */
	delayMs: number
	/** No instance profile: the role listing answers 404. */
	noRole: boolean
	/** The availability zone the instance is in. */
	zone: string
	/** The keys issued as `accessKeyId` expire now (Bedrock refuses them: ExpiredTokenException). */
	expire(accessKeyId: string): void
	/** The keys issued as `accessKeyId`, with whether they are still good. */
	keysFor(accessKeyId: string): { keys: IamKeys; expired: boolean } | undefined
	stop(): Promise<void>
}

export const ROLE = 'switchboard-gateway-role'

/**
 * Starts the endpoints on a free port. `containerToken`: the `Authorization` the container endpoint takes.
 * @example const aws = startAwsMetadataMock('container-auth-token'); process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = aws.url
 */
export function startAwsMetadataMock(containerToken: string): AwsMetadataMock {
	const sessions = new Set<string>()
	const issued = new Map<string, { keys: IamKeys; until: number }>()
	const requests: AwsMetadataMock['requests'] = []
	let fetches = 0

	function issue(extra: Record<string, string>): Response {
		const n = ++fetches
		const keys = { accessKeyId: `ASIAMOCKROLE${String(n).padStart(8, '0')}`, secretAccessKey: `mockRoleSecret/${crypto.randomUUID()}`, sessionToken: `IQoJb3JpZ2luX2VjEMOCK${n}${crypto.randomUUID()}` }
		const until = Date.now() + mock.ttl * 1000
		issued.set(keys.accessKeyId, { keys, until })
		return Response.json({ ...extra, AccessKeyId: keys.accessKeyId, SecretAccessKey: keys.secretAccessKey, Token: keys.sessionToken, Expiration: new Date(until).toISOString().replace(/\.\d{3}Z$/, 'Z') })
	}

	async function handle(req: Request): Promise<Response> {
		const path = new URL(req.url).pathname
		const h = req.headers
		requests.push({
			method: req.method,
			path,
			headers: Object.fromEntries(['x-aws-ec2-metadata-token-ttl-seconds', 'x-aws-ec2-metadata-token', 'authorization'].filter((k) => h.has(k)).map((k) => [k, h.get(k)!])),
		})
		if (path === '/latest/api/token') {
			if (req.method !== 'PUT') return new Response('', { status: 405 })
			const ttl = Number(h.get('x-aws-ec2-metadata-token-ttl-seconds'))
			if (!Number.isInteger(ttl) || ttl < 1 || ttl > 21600) return new Response('', { status: 400 })
			const token = `AQAEAmockImdsSession${crypto.randomUUID()}`
			sessions.add(token)
			return new Response(token, { headers: { 'content-type': 'text/plain', 'x-aws-ec2-metadata-token-ttl-seconds': String(ttl) } })
		}
		if (path.startsWith('/latest/meta-data/')) {
			if (!sessions.has(h.get('x-aws-ec2-metadata-token') ?? '')) return new Response('', { status: 401 })
			if (path === '/latest/meta-data/placement/availability-zone') return new Response(mock.zone, { headers: { 'content-type': 'text/plain' } })
			if (path === '/latest/meta-data/iam/security-credentials/') return mock.noRole ? new Response('', { status: 404 }) : new Response(ROLE, { headers: { 'content-type': 'text/plain' } })
			if (path === `/latest/meta-data/iam/security-credentials/${ROLE}` && !mock.noRole) {
				if (mock.delayMs) await Bun.sleep(mock.delayMs)
				return issue({ Code: 'Success', LastUpdated: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), Type: 'AWS-HMAC' })
			}
			return new Response('', { status: 404 })
		}
		if (path.startsWith('/v2/credentials/') && req.method === 'GET') {
			if (h.get('authorization') !== containerToken) return Response.json({ code: 'AccessDeniedException', message: 'Unauthorized' }, { status: 401 })
			if (mock.delayMs) await Bun.sleep(mock.delayMs)
			return issue({ RoleArn: `arn:aws:iam::111122223333:role/${ROLE}` })
		}
		return new Response('', { status: 404 })
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	const url = `http://127.0.0.1:${server.port}`
	// The knobs a test turns (`mock.ttl = 1`) are the object's own members, which the handlers read.
	const mock: AwsMetadataMock = {
		ttl: 3600,
		delayMs: 0,
		noRole: false,
		zone: 'us-east-2b',
		url,
		containerUri: `${url}/v2/credentials/5f4e3d2c-task`,
		requests,
		get fetches() {
			return fetches
		},
		expire(accessKeyId) {
			const e = issued.get(accessKeyId)
			if (e) e.until = Date.now()
		},
		keysFor(accessKeyId) {
			const e = issued.get(accessKeyId)
			return e && { keys: e.keys, expired: e.until <= Date.now() }
		},
		async stop() {
			await server.stop(true)
		},
	}
	return mock
}
