/**
 * The subject token of workload identity federation from AWS (an `external_account` whose `credential_source` has
 * `environment_id: "aws1"`: https://cloud.google.com/iam/docs/workload-identity-federation-with-other-clouds): a
 * GetCallerIdentity request to AWS STS, SigV4-signed with the workload's AWS credentials but never sent; Google's STS
 * sends it to AWS to learn who signed it. The token is the request serialized as JSON, URL-encoded:
 * `{"url", "method": "POST", "headers": [{"key", "value"}, …]}`, the headers those signed (`authorization`, `host`,
 * `x-amz-date`, `x-amz-security-token` with temporary credentials) and `x-goog-cloud-target-resource`, the key's
 * `audience`, signed along so the token is good for that provider only (Google's own sample signs it too).
 * - the region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the availability zone `region_url` answers without its
 *   final letter (`us-east-2b` → `us-east-2`);
 * - the credentials: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`) when set, else the instance
 *   role's from `url` (`…/latest/meta-data/iam/security-credentials`: its name, then its keys);
 * - with `imdsv2_session_token_url`, an IMDSv2 session first, whose token the metadata requests carry;
 * - `regional_cred_verification_url` (`https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15`)
 *   with `{region}` filled in is the request signed. It must be that request of AWS STS and no other: the gateway's
 *   credentials sign it and the token goes to the key's `token_url`, so any other request (IAM's CreateUser…) would be
 *   a signed request of the gateway's handed to whoever wrote the key.
 * The metadata requests are the AWS SDKs' own (aws/ambient.ts, metadata-service.ts); the signer is aws/sigv4.ts.
 * @module
 */
import { imdsSession, refused, roleCredentials } from '../aws/ambient'
import { type AwsCredentials, signV4 } from '../aws/sigv4'
import { metadataRequest, noAmbient } from '../metadata-service'
import { misconfigured, urlField } from './credential-json'

export type AwsSource = { regionUrl?: string; credentialsUrl?: string; sessionUrl?: string; verificationUrl: string }

type Env = Record<string, string | undefined>

const SERVICE = 'aws metadata (external_account credential_source)'
/** AWS STS's hosts: global, regional (`{region}` until filled in), FIPS, China's partition. */
const STS_HOST = /^sts(-fips)?(\.(\{region\}|[a-z0-9-]+))?\.amazonaws\.com(\.cn)?$/
const REGION = /^[a-z0-9-]{4,40}$/

/**
 * The AWS `credential_source` of an external_account key; a member missing or malformed is refused naming it.
 * @example awsSourceOf({ environment_id: 'aws1', region_url: 'http://169.254.169.254/latest/meta-data/placement/availability-zone', url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials', regional_cred_verification_url: 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15' })
 */
export function awsSourceOf(cs: Record<string, unknown>): AwsSource {
	const version = typeof cs.environment_id === 'string' ? /^aws(\d+)$/.exec(cs.environment_id)?.[1] : undefined
	if (version !== '1') throw misconfigured('`credential_source.environment_id` must be "aws1", the only AWS source version there is')
	const verificationUrl = cs.regional_cred_verification_url
	if (typeof verificationUrl !== 'string' || !verificationUrl) throw misconfigured('an AWS `credential_source` needs `regional_cred_verification_url`')
	if (!isGetCallerIdentity(verificationUrl.replaceAll('{region}', 'us-east-1')))
		throw misconfigured('`credential_source.regional_cred_verification_url` must be AWS STS\'s GetCallerIdentity (https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15): the gateway signs no other AWS request')
	return {
		regionUrl: urlField(cs, 'region_url', undefined, 'credential_source.region_url'),
		credentialsUrl: urlField(cs, 'url', undefined, 'credential_source.url'),
		sessionUrl: urlField(cs, 'imdsv2_session_token_url', undefined, 'credential_source.imdsv2_session_token_url'),
		verificationUrl,
	}
}

/** `https://sts….amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15`, nothing more (no user, port, path, other parameters). */
function isGetCallerIdentity(url: string): boolean {
	let u: URL
	try {
		u = new URL(url)
	} catch {
		return false
	}
	const params = [...u.searchParams].map(([k, v]) => `${k}=${v}`).sort()
	return u.protocol === 'https:' && !u.username && !u.password && !u.port && !u.hash && u.pathname === '/' && STS_HOST.test(u.hostname) && params.join('&') === 'Action=GetCallerIdentity&Version=2011-06-15'
}

/**
 * The subject token for `audience`, and the AWS secrets it was made with (cut from anything said). Throws as the
 * ambient credentials do: `upstream_auth` ("no ambient credentials: …") where the instance has none (no role, no
 * region), `upstream_unreachable` where its metadata does not answer.
 */
export async function awsSubjectToken(src: AwsSource, audience: string, env: Env = process.env, now = new Date()): Promise<{ token: string; secrets: string[] }> {
	const fromEnv = env.AWS_REGION || env.AWS_DEFAULT_REGION
	const keysFromEnv = env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
	// One IMDSv2 session serves the region and the role's keys, and only when the metadata is asked at all.
	const headers = src.sessionUrl && (!fromEnv || !keysFromEnv) ? await imdsSession(SERVICE, src.sessionUrl) : {}
	const region = fromEnv || (await instanceRegion(src, headers))
	if (!REGION.test(region)) throw noAmbient(`the AWS region is not one (${region.slice(0, 40)})`)
	const credentials: AwsCredentials = keysFromEnv
		? { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY!, sessionToken: env.AWS_SESSION_TOKEN || undefined }
		: await instanceCredentials(src, headers)
	const url = src.verificationUrl.replaceAll('{region}', region)
	const target = { 'x-goog-cloud-target-resource': audience }
	const signed = signV4({ method: 'POST', url, headers: target, body: '', region, service: 'sts', credentials, now })
	const all: Record<string, string> = { ...signed, host: new URL(url).host, ...target }
	const list = Object.keys(all)
		.sort()
		.map((key) => ({ key, value: all[key]! }))
	const token = encodeURIComponent(JSON.stringify({ url, method: 'POST', headers: list }))
	return { token, secrets: [credentials.secretAccessKey, ...(credentials.sessionToken ? [credentials.sessionToken] : [])] }
}

/** `us-east-2b` → `us-east-2`, as Google's libraries read the availability zone. */
async function instanceRegion(src: AwsSource, headers: Record<string, string>): Promise<string> {
	if (!src.regionUrl) throw noAmbient('neither AWS_REGION nor AWS_DEFAULT_REGION is set, and the AWS `credential_source` has no `region_url`')
	const { res, text } = await metadataRequest(SERVICE, src.regionUrl, { headers })
	if (!res.ok) throw refused(SERVICE, res.status, 'refused the availability zone')
	return text.trim().slice(0, -1)
}

async function instanceCredentials(src: AwsSource, headers: Record<string, string>): Promise<AwsCredentials> {
	if (!src.credentialsUrl) throw noAmbient('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and the AWS `credential_source` has no `url`')
	return (await roleCredentials(SERVICE, src.credentialsUrl, headers)).token
}
