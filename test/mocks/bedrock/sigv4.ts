/**
 * The mock's own check of an AWS SigV4 `Authorization` header (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html),
 * with node:crypto, apart from the gateway's signer: the canonical request rebuilt from what arrived (method, the
 * wire path with each segment encoded once more, the sorted query, the signed headers, the body's SHA-256), then
 * the signature compared. Answers as Bedrock does when it does not match. Also AWS STS's check of the GetCallerIdentity
 * request a Google workload identity federation token carries (`service` sts: test/mocks/vertex/aws-subject.ts).
 * @module
 */
import { createHash, createHmac } from 'node:crypto'

export type IamKeys = { accessKeyId: string; secretAccessKey: string; sessionToken?: string }

const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
const sha = (s: string) => createHash('sha256').update(s).digest('hex')

/** Why the request's signature is refused (Bedrock's error type and words), or undefined when it holds. */
export type SignedRequest = { method: string; rawPath: string; query: URLSearchParams; headers: Headers; body: string }

export function checkSigV4(req: SignedRequest, keys: IamKeys, region: string, now = Date.now(), service = 'bedrock'): { status: number; type: string; message: string } | undefined {
	const auth = req.headers.get('authorization') ?? ''
	const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth)
	if (!m) return { status: 400, type: 'IncompleteSignature', message: 'Authorization header requires Credential, SignedHeaders and Signature.' }
	const [, akid, day, reg, scoped, signedHeaders, signature] = m as unknown as string[]
	if (akid !== keys.accessKeyId) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' }
	if (reg !== region || scoped !== service) return { status: 403, type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and to service '${service}'.` }
	const date = req.headers.get('x-amz-date') ?? ''
	const at = Date.parse(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`)
	if (!date.startsWith(day!) || !Number.isFinite(at) || Math.abs(now - at) > 5 * 60_000) return { status: 403, type: 'InvalidSignatureException', message: 'Signature expired or not yet current.' }
	const names = signedHeaders!.split(';')
	if (!names.includes('host') || !names.includes('x-amz-date')) return { status: 403, type: 'InvalidSignatureException', message: "'Host' and 'X-Amz-Date' must be signed." }
	if (keys.sessionToken && (req.headers.get('x-amz-security-token') !== keys.sessionToken || !names.includes('x-amz-security-token')))
		return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' }
	const query = [...req.query].map(([k, v]) => [enc(k), enc(v)]).sort((a, b) => (a[0]! === b[0]! ? (a[1]! < b[1]! ? -1 : 1) : a[0]! < b[0]! ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join('&')
	const canonical = [
		req.method,
		req.rawPath.split('/').map(enc).join('/'),
		query,
		names.map((n) => `${n}:${(req.headers.get(n) ?? '').trim().replace(/\s+/g, ' ')}\n`).join(''),
		signedHeaders,
		sha(req.body),
	].join('\n')
	const scope = `${day}/${region}/${service}/aws4_request`
	const toSign = `AWS4-HMAC-SHA256\n${date}\n${scope}\n${sha(canonical)}`
	let key: Buffer = createHmac('sha256', `AWS4${keys.secretAccessKey}`).update(day!).digest()
	for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest()
	if (createHmac('sha256', key).update(toSign).digest('hex') !== signature)
		return {
			status: 403,
			type: 'InvalidSignatureException',
			message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
		}
	return undefined
}
