/**
 * AWS Signature Version 4 for a request with its body in hand (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html):
 * canonical request → string to sign → HMAC chain of the secret over date, region, service → `Authorization`.
 * Bun's own HMAC (`Bun.CryptoHasher`), no AWS SDK.
 * @module
 */

export type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string }

export type SignInput = {
	method: string
	url: string
	/** Header names in any case; `host` is taken from the url. */
	headers: Record<string, string>
	body?: string
	region: string
	service: string
	credentials: AwsCredentials
	/** Signing time (tests pin it); default now. */
	now?: Date
	/**
	 * Every service but S3 signs each path segment encoded once more than it is on the wire ("Each path segment must be
	 * URI-encoded twice (except for Amazon S3)"): a Bedrock model id's `:` is `%3A` in the url and `%253A` in the
	 * canonical request. Default true.
	 */
	doubleEncodePath?: boolean
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')
const sha256Hex = (data: string) => new Bun.CryptoHasher('sha256').update(data).digest('hex')
const hmac = (key: Uint8Array | string, data: string): Uint8Array => new Bun.CryptoHasher('sha256', key).update(data).digest() as Uint8Array

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters (A-Z a-z 0-9 - _ . ~) as %XX, uppercase. */
export const uriEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** The canonical URI of a wire path (already percent-encoded, as `new URL().pathname` gives it). */
export function canonicalPath(pathname: string, doubleEncode = true): string {
	if (!doubleEncode) return pathname || '/'
	return (pathname || '/').split('/').map(uriEncode).join('/')
}

/** Query parameters sorted by encoded name, then value. */
function canonicalQuery(params: URLSearchParams): string {
	const pairs: [string, string][] = []
	for (const [k, v] of params) pairs.push([uriEncode(k), uriEncode(v)])
	pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
	return pairs.map(([k, v]) => `${k}=${v}`).join('&')
}

/** `20150830T123600Z` */
export const amzDate = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')

/**
 * The headers that authenticate the request: `x-amz-date`, `x-amz-security-token` with temporary credentials, and
 * `authorization`. Every header given (and `host`) is signed.
 * @example
 * signV4({ method: 'GET', url: 'https://example.amazonaws.com/', headers: {}, region: 'us-east-1', service: 'service',
 *   credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: '…' }, now: new Date('2015-08-30T12:36:00Z') }).authorization
 */
export function signV4(input: SignInput): Record<string, string> {
	const u = new URL(input.url)
	const date = amzDate(input.now ?? new Date())
	const day = date.slice(0, 8)
	const out: Record<string, string> = { 'x-amz-date': date }
	if (input.credentials.sessionToken) out['x-amz-security-token'] = input.credentials.sessionToken
	const signed = new Map<string, string>([['host', u.host]])
	for (const [k, v] of Object.entries({ ...input.headers, ...out })) signed.set(k.toLowerCase(), v.trim().replace(/\s+/g, ' '))
	const names = [...signed.keys()].sort()
	const signedHeaders = names.join(';')
	const canonical = [
		input.method.toUpperCase(),
		canonicalPath(u.pathname, input.doubleEncodePath !== false),
		canonicalQuery(u.searchParams),
		names.map((n) => `${n}:${signed.get(n)}\n`).join(''),
		signedHeaders,
		sha256Hex(input.body ?? ''),
	].join('\n')
	const scope = `${day}/${input.region}/${input.service}/aws4_request`
	const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonical)].join('\n')
	let key = hmac(`AWS4${input.credentials.secretAccessKey}`, day)
	key = hmac(key, input.region)
	key = hmac(key, input.service)
	key = hmac(key, 'aws4_request')
	const signature = hex(hmac(key, toSign))
	out.authorization = `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`
	return out
}
