/**
 * The AWS credentials of the role the gateway runs as, for Bedrock channels keyed `ambient`, found where the AWS SDKs
 * find them (https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html), in this order:
 * - container credentials (ECS tasks, EKS Pod Identity: https://docs.aws.amazon.com/sdkref/latest/guide/feature-container-credentials.html):
 *   `GET http://169.254.170.2{AWS_CONTAINER_CREDENTIALS_RELATIVE_URI}`, else `GET {AWS_CONTAINER_CREDENTIALS_FULL_URI}`
 *   (over http only a loopback address or the agents' 169.254.170.2 / 169.254.170.23 / fd00:ec2::23), with
 *   `Authorization:` the contents of `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`, else `AWS_CONTAINER_AUTHORIZATION_TOKEN`;
 * - the EC2 instance metadata service, IMDSv2 (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-metadata-security-credentials.html):
 *   `PUT /latest/api/token` (`X-aws-ec2-metadata-token-ttl-seconds`) for a session token, then
 *   `GET /latest/meta-data/iam/security-credentials/` for the role's name and `GET …/{role}` for its credentials, each
 *   with `X-aws-ec2-metadata-token`; at `AWS_EC2_METADATA_SERVICE_ENDPOINT` (default http://169.254.169.254), not at
 *   all when `AWS_EC2_METADATA_DISABLED=true`.
 * Both answer `{AccessKeyId, SecretAccessKey, Token, Expiration}`: temporary keys, signed with as IAM keys are (SigV4
 * with `x-amz-security-token`), cached per channel until five minutes before `Expiration` (cached-token.ts).
 * Every address comes from the process's environment (metadata-service.ts), never from a channel or a call.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { type IssuedToken, TokenCache } from '../cached-token'
import { metadataFailed, metadataRequest, noAmbient, secondsUntil } from '../metadata-service'
import type { AwsCredentials } from './sigv4'

const CONTAINER_HOST = 'http://169.254.170.2'
const IMDS_ENDPOINT = 'http://169.254.169.254'
/** The IMDSv2 session the SDKs ask for (6 hours, the most IMDS gives); one is asked per credentials fetch. */
const IMDS_SESSION_SECONDS = '21600'
/** Hosts a FULL_URI may name over plain http: loopback and the ECS / EKS Pod Identity agents. */
const HTTP_HOSTS = new Set(['localhost', '169.254.170.2', '169.254.170.23', '[fd00:ec2::23]', '[::1]'])
/** Credentials without `Expiration` (a static container endpoint) are asked again after an hour. */
const DEFAULT_EXPIRES_IN = 3600

type Env = Record<string, string | undefined>

const tokens = new TokenCache<AwsCredentials>()

/**
 * The role's credentials for a channel: cached while fresh, else one fetch shared by the calls that wait on it.
 * Throws `upstream_auth` ("no ambient credentials: …") where there are none (no role attached, metadata turned off),
 * `upstream_unreachable` where the service does not answer (not on AWS, or a blip).
 */
export const ambientAwsCredentials = (channelId: number, channelKey: string, signal?: AbortSignal): Promise<AwsCredentials> =>
	tokens.get(channelId, channelKey, () => fetchCredentials(process.env), signal)

/** Forgets the channel's credentials when they are those of `accessKeyId` (Bedrock refused them), so the next call fetches others. */
export const dropAmbientAwsCredentials = (channelId: number, accessKeyId: string): boolean => tokens.dropWhere(channelId, (c) => c.accessKeyId === accessKeyId)

/** Container credentials when the environment names an endpoint, else the instance's role. */
export async function fetchCredentials(env: Env): Promise<IssuedToken<AwsCredentials>> {
	const container = containerUrl(env)
	if (container) return containerCredentials(container, env)
	if (env.AWS_EC2_METADATA_DISABLED?.toLowerCase() === 'true')
		throw noAmbient('no AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI, and AWS_EC2_METADATA_DISABLED is true')
	return instanceCredentials(env.AWS_EC2_METADATA_SERVICE_ENDPOINT || IMDS_ENDPOINT)
}

function containerUrl(env: Env): string | undefined {
	if (env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) return CONTAINER_HOST + env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
	const full = env.AWS_CONTAINER_CREDENTIALS_FULL_URI
	if (!full) return undefined
	let u: URL
	try {
		u = new URL(full)
	} catch {
		throw noAmbient('AWS_CONTAINER_CREDENTIALS_FULL_URI is not a URL')
	}
	if (u.protocol === 'https:') return full
	if (u.protocol === 'http:' && (HTTP_HOSTS.has(u.hostname) || /^127\.\d+\.\d+\.\d+$/.test(u.hostname))) return full
	throw noAmbient('AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or http to a loopback address or 169.254.170.2 / 169.254.170.23 / fd00:ec2::23 (as the AWS SDKs require)')
}

async function containerCredentials(url: string, env: Env): Promise<IssuedToken<AwsCredentials>> {
	const service = 'aws container credentials endpoint'
	const headers: Record<string, string> = { accept: 'application/json' }
	const file = env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
	if (file) {
		try {
			headers.authorization = (await Bun.file(file).text()).trim()
		} catch {
			throw noAmbient(`AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE ${file} cannot be read`)
		}
	} else if (env.AWS_CONTAINER_AUTHORIZATION_TOKEN) headers.authorization = env.AWS_CONTAINER_AUTHORIZATION_TOKEN
	const { res, text } = await metadataRequest(service, url, { headers })
	return credentialsOf(service, res, text)
}

async function instanceCredentials(endpoint: string): Promise<IssuedToken<AwsCredentials>> {
	const base = endpoint.replace(/\/+$/, '')
	const headers = await imdsSession(IMDS_SERVICE, `${base}/latest/api/token`)
	return roleCredentials(IMDS_SERVICE, `${base}/latest/meta-data/iam/security-credentials`, headers)
}

const IMDS_SERVICE = 'aws instance metadata service'

/**
 * The header of an IMDSv2 session (`PUT {tokenUrl}` with `X-aws-ec2-metadata-token-ttl-seconds`), which every metadata
 * request then carries. Also for workload identity federation from AWS (google/aws-subject-token.ts), at the key's URL.
 */
export async function imdsSession(service: string, tokenUrl: string): Promise<Record<string, string>> {
	const session = await metadataRequest(service, tokenUrl, { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': IMDS_SESSION_SECONDS } })
	if (!session.res.ok) throw refused(service, session.res.status, 'refused an IMDSv2 session token')
	return { 'x-aws-ec2-metadata-token': session.text.trim() }
}

/**
 * The instance role's credentials at `credentialsUrl` (`…/latest/meta-data/iam/security-credentials`, with or without
 * its final slash): the role's name listed there, then `{credentialsUrl}/{role}`, each with `headers` (an IMDSv2 session's).
 */
export async function roleCredentials(service: string, credentialsUrl: string, headers: Record<string, string>): Promise<IssuedToken<AwsCredentials>> {
	const base = credentialsUrl.replace(/\/+$/, '')
	const roles = await metadataRequest(service, `${base}/`, { headers })
	if (roles.res.status === 404) throw noAmbient(`${service}: no IAM role is attached to this instance (an instance profile)`)
	if (!roles.res.ok) throw refused(service, roles.res.status, 'refused the role name')
	const role = roles.text.split('\n')[0]?.trim()
	if (!role) throw noAmbient(`${service}: no IAM role is attached to this instance (an instance profile)`)
	const creds = await metadataRequest(service, `${base}/${encodeURIComponent(role)}`, { headers })
	return credentialsOf(`${service} (role ${role})`, creds.res, creds.text)
}

/** A refusal (4xx) says the environment has no credentials for the gateway; a failure (5xx) may pass. */
export const refused = (service: string, status: number, what: string): GatewayError =>
	status >= 500 || status === 429 ? metadataFailed(service, status) : noAmbient(`${service} ${what} (HTTP ${status})`)

/** `{AccessKeyId, SecretAccessKey, Token, Expiration}` (IMDS adds `Code: "Success"`); the body is never quoted: it holds the keys. */
function credentialsOf(service: string, res: Response, text: string): IssuedToken<AwsCredentials> {
	if (!res.ok) throw refused(service, res.status, 'refused credentials')
	let o: Record<string, unknown> = {}
	try {
		o = JSON.parse(text) as Record<string, unknown>
	} catch {
		// said below
	}
	if (typeof o.Code === 'string' && o.Code !== 'Success') throw noAmbient(`${service} answered Code ${o.Code.slice(0, 60)}`)
	if (typeof o.AccessKeyId !== 'string' || !o.AccessKeyId || typeof o.SecretAccessKey !== 'string' || !o.SecretAccessKey)
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: `${service} answered without AccessKeyId and SecretAccessKey` })
	const token = { accessKeyId: o.AccessKeyId, secretAccessKey: o.SecretAccessKey, sessionToken: typeof o.Token === 'string' && o.Token ? o.Token : undefined }
	return { token, expiresIn: secondsUntil(o.Expiration) ?? DEFAULT_EXPIRES_IN }
}
