/**
 * The mock STS's check of an AWS subject token (`subject_token_type` `urn:ietf:params:aws:token-type:aws4_request`,
 * https://cloud.google.com/iam/docs/workload-identity-federation-with-other-clouds): the URL-encoded JSON of a signed
 * AWS STS GetCallerIdentity request, `{url, method: "POST", headers: [{key, value}]}`. Google's STS sends that request
 * to AWS, whose answer names the caller; here the SigV4 signature is verified as AWS would (test/mocks/bedrock/sigv4.ts,
 * apart from the gateway's signer) with the keys `keysFor` knows, and the request must name the pool provider in
 * `x-goog-cloud-target-resource`.
 * @module
 */
import type { IamKeys } from '../bedrock/sigv4'
import { checkSigV4 } from '../bedrock/sigv4'

export const AWS_SUBJECT_TYPE = 'urn:ietf:params:aws:token-type:aws4_request'

/** The keys of an access key id the mock's AWS knows (a role's from the metadata mock, static ones), if any. */
export type AwsKeys = (accessKeyId: string) => IamKeys | undefined

/** Why the token is refused (STS's words), or undefined when AWS would answer GetCallerIdentity to it. */
export function checkAwsSubject(token: string, audience: string, keysFor: AwsKeys | undefined): string | undefined {
	let req: { url?: unknown; method?: unknown; headers?: unknown }
	try {
		req = JSON.parse(decodeURIComponent(token))
	} catch {
		return 'The subject token is not a valid serialized AWS request.'
	}
	if (typeof req.url !== 'string' || req.method !== 'POST' || !Array.isArray(req.headers)) return 'The subject token is not a valid serialized AWS request.'
	const url = new URL(req.url)
	const region = /^sts\.([a-z0-9-]+)\.amazonaws\.com$/.exec(url.hostname)?.[1]
	if (url.protocol !== 'https:' || !region || url.searchParams.get('Action') !== 'GetCallerIdentity') return 'The AWS request must be a GetCallerIdentity request to a regional AWS STS endpoint.'
	const headers = new Headers()
	for (const h of req.headers as Array<{ key?: unknown; value?: unknown }>) if (typeof h.key === 'string' && typeof h.value === 'string') headers.set(h.key, h.value)
	if (headers.get('host') !== url.host) return 'The AWS request must carry its host header.'
	if (headers.get('x-goog-cloud-target-resource') !== audience) return 'The AWS request header x-goog-cloud-target-resource does not match the audience.'
	const akid = /Credential=([^/]+)\//.exec(headers.get('authorization') ?? '')?.[1] ?? ''
	const keys = keysFor?.(akid)
	if (!keys) return 'AWS refused the request: The security token included in the request is invalid.'
	const bad = checkSigV4({ method: 'POST', rawPath: url.pathname, query: url.searchParams, headers, body: '' }, keys, region, Date.now(), 'sts')
	return bad && `AWS refused the request: ${bad.message}`
}
