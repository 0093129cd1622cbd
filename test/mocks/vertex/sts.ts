/**
 * The mock's workload identity federation (https://cloud.google.com/iam/docs/workload-identity-federation): a pool
 * provider whose `audience` and subject token it knows, Google's Security Token Service and the IAM Service Account
 * Credentials API, as documented:
 * - `POST /v1/token` (STS, https://cloud.google.com/iam/docs/reference/sts/rest/v1/TopLevel/token): a form with
 *   `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `audience`, `scope`,
 *   `requested_token_type=urn:ietf:params:oauth:token-type:access_token`, `subject_token`, `subject_token_type`;
 *   answered `{access_token, issued_token_type, token_type: "Bearer", expires_in}`, refused
 *   `{error, error_description}` (400 `invalid_request`, `invalid_target`, `invalid_scope`, `invalid_grant`);
 * - `POST /v1/projects/-/serviceAccounts/{email}:generateAccessToken`
 *   (https://cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/generateAccessToken):
 *   `Authorization: Bearer {caller's token}`, `{"delegates"?: [...], "scope": [...], "lifetime": "3600s"}` →
 *   `{accessToken, expireTime}`; Google's `{error: {code, message, status}}` otherwise (401 for a token the mock did not
 *   issue, 403 for a service account the caller may not impersonate, 400 for a lifetime past an hour, the default
 *   organization policy's limit). The caller may impersonate `serviceAccount` and `delegate`; `chained` only through
 *   `delegate` (`delegates: ["projects/-/serviceAccounts/{delegate}"]`), whom it trusts;
 * - `GET /subject-token`: the workload's identity provider as a URL source (shaped like Azure's instance metadata
 *   service: `Metadata: true` required, `{"access_token": …}`), for `credential_source.url`.
 * @module
 */
import { AWS_SUBJECT_TYPE, type AwsKeys, checkAwsSubject } from './aws-subject'
import { refuse } from './oauth'

export type Workload = {
	/** The pool provider's resource name, the exchange's `audience`. */
	audience: string
	/** The workload's OIDC token (a JWT) the provider takes. */
	subjectToken: string
	/** The service account the federated identity (or any caller the mock issued a token to) may impersonate. */
	serviceAccount: string
	/** A service account the caller may impersonate, which may impersonate `chained`. */
	delegate: string
	/** A service account reached only through `delegate`. */
	chained: string
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')

/** A pool provider in `project` (its number in the audience) and a Kubernetes-style service account token for it. */
export function testWorkload(projectNumber: string, project: string): Workload {
	const audience = `//iam.googleapis.com/projects/${projectNumber}/locations/global/workloadIdentityPools/mock-pool/providers/mock-k8s`
	const claims = { iss: 'https://kubernetes.default.svc', sub: 'system:serviceaccount:default:gateway', aud: audience, exp: Math.floor(Date.now() / 1000) + 3600 }
	const subjectToken = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.${Buffer.from(crypto.getRandomValues(new Uint8Array(64))).toString('base64url')}`
	return { audience, subjectToken, serviceAccount: `vertex-caller@${project}.iam.gserviceaccount.com`, delegate: `delegate@${project}.iam.gserviceaccount.com`, chained: `chained@${project}.iam.gserviceaccount.com` }
}

/**
 * An `external_account` credential configuration for `workload`, as `gcloud iam workload-identity-pools
 * create-cred-config` writes it, its STS (and impersonation) at the mock's `origin`.
 * @example externalAccountKey(v.url, v.workload, { file: '/tmp/token' }, { impersonate: true })
 */
export function externalAccountKey(origin: string, w: Workload, source: Record<string, unknown>, opts: { impersonate?: boolean; quotaProject?: string; extra?: Record<string, unknown> } = {}): string {
	const key: Record<string, unknown> = {
		universe_domain: 'googleapis.com',
		type: 'external_account',
		audience: w.audience,
		subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
		token_url: `${origin}/v1/token`,
		credential_source: source,
		...opts.extra,
	}
	if (opts.impersonate) key.service_account_impersonation_url = `${origin}/v1/projects/-/serviceAccounts/${w.serviceAccount}:generateAccessToken`
	if (opts.quotaProject) key.quota_project_id = opts.quotaProject
	return JSON.stringify(key)
}

const SUBJECT_TYPES = ['urn:ietf:params:oauth:token-type:jwt', 'urn:ietf:params:oauth:token-type:id_token', 'urn:ietf:params:oauth:token-type:saml2', AWS_SUBJECT_TYPE]

/**
 * STS's answer to one token exchange (`form` from formOf, undefined when no form POST); an AWS subject token is checked
 * against the AWS keys `awsKeys` knows (aws-subject.ts), any other must be the workload's.
 */
export function stsResponse(form: URLSearchParams | undefined, w: Workload, issue: () => { token: string; expiresIn: number }, awsKeys?: AwsKeys): Response {
	if (!form) return refuse(400, 'invalid_request', 'Invalid request: the body must be application/x-www-form-urlencoded.')
	if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') return refuse(400, 'invalid_request', 'Invalid value for "grant_type".')
	if (form.get('requested_token_type') !== 'urn:ietf:params:oauth:token-type:access_token') return refuse(400, 'invalid_request', 'Invalid value for "requested_token_type".')
	if (!SUBJECT_TYPES.includes(form.get('subject_token_type') ?? '')) return refuse(400, 'invalid_request', 'Invalid value for "subject_token_type".')
	if (form.get('audience') !== w.audience) return refuse(400, 'invalid_target', 'The target service indicated by the "audience" parameters is invalid. This might either be because the pool or provider is disabled or deleted or because it doesn\'t exist.')
	if (!form.get('scope')?.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return refuse(400, 'invalid_scope', 'Invalid value for "scope".')
	if (form.get('subject_token_type') === AWS_SUBJECT_TYPE) {
		const why = checkAwsSubject(form.get('subject_token') ?? '', w.audience, awsKeys)
		if (why) return refuse(400, 'invalid_grant', why)
	} else if (form.get('subject_token') !== w.subjectToken) return refuse(400, 'invalid_grant', 'The ID Token is invalid: signature verification failed.')
	const { token, expiresIn } = issue()
	return Response.json({ access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: expiresIn })
}

const googleError = (code: number, status: string, message: string) => Response.json({ error: { code, message, status } }, { status: code })

export const IMPERSONATE_PATH = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/

/** generateAccessToken's answer; `liveToken` says whether a bearer is a live token the mock issued; `issue` makes the token. */
export async function impersonateResponse(req: Request, email: string, w: Workload, liveToken: (bearer: string) => boolean, issue: () => string): Promise<Response> {
	const bearer = (req.headers.get('authorization') ?? '').replace(/^Bearer /, '')
	if (!liveToken(bearer)) return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.')
	let body: { delegates?: unknown; scope?: unknown; lifetime?: unknown }
	try {
		body = (await req.json()) as typeof body
	} catch {
		return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.')
	}
	const delegates = body.delegates ?? []
	if (!Array.isArray(delegates) || delegates.some((d) => typeof d !== 'string' || !d.startsWith('projects/-/serviceAccounts/')))
		return googleError(400, 'INVALID_ARGUMENT', 'Invalid value at \'delegates\': each must be projects/-/serviceAccounts/{ACCOUNT_EMAIL_OR_UNIQUEID}.')
	// Each link may impersonate the next: the caller the first, a delegate the target.
	const chain = [...(delegates as string[]).map((d) => d.slice('projects/-/serviceAccounts/'.length)), decodeURIComponent(email)]
	const trusts = (from: string | undefined, to: string) => (from === undefined ? to === w.serviceAccount || to === w.delegate : from === w.delegate && to === w.chained)
	if (chain.some((to, i) => !trusts(chain[i - 1], to))) return googleError(403, 'PERMISSION_DENIED', "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
	if (!Array.isArray(body.scope) || !body.scope.includes('https://www.googleapis.com/auth/cloud-platform')) return googleError(400, 'INVALID_ARGUMENT', 'Scope required.')
	const lifetime = typeof body.lifetime === 'string' ? /^(\d+)s$/.exec(body.lifetime)?.[1] : '3600'
	if (lifetime === undefined || Number(lifetime) > 3600) return googleError(400, 'INVALID_ARGUMENT', 'The lifetime must be between 1s and 3600s.')
	return Response.json({ accessToken: issue(), expireTime: new Date(Date.now() + Number(lifetime) * 1000).toISOString() })
}

/** The identity provider's token endpoint (a URL source): the subject token as JSON, to a caller sending `Metadata: true`. */
export function subjectTokenResponse(req: Request, w: Workload): Response {
	if (req.headers.get('metadata') !== 'true') return Response.json({ error: 'bad_request', error_description: 'Required metadata header not specified' }, { status: 400 })
	return Response.json({ access_token: w.subjectToken, expires_in: '3599', token_type: 'Bearer' })
}

/**
 * An `impersonated_service_account` file, as `gcloud auth application-default login --impersonate-service-account`
 * writes it: `source` (a credentials JSON) impersonates `target` through `delegates`, generateAccessToken at the mock's `origin`.
 * @example impersonatedKey(v.url, v.workload.serviceAccount, v.user.json, [], 'proj-1')
 */
export function impersonatedKey(origin: string, target: string, source: string, delegates: string[], quotaProject?: string): string {
	const key: Record<string, unknown> = {
		delegates,
		service_account_impersonation_url: `${origin}/v1/projects/-/serviceAccounts/${target}:generateAccessToken`,
		source_credentials: JSON.parse(source),
		type: 'impersonated_service_account',
	}
	if (quotaProject) key.quota_project_id = quotaProject
	return JSON.stringify(key)
}
