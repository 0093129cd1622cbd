/**
 * A service account's access token, asked of the IAM Service Account Credentials API with another token
 * (https://cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/generateAccessToken):
 * `POST …/projects/-/serviceAccounts/{email}:generateAccessToken`, `Authorization: Bearer {caller's token}`, JSON body
 * `{"scope": [...], "lifetime": "3600s"}`, answered `{"accessToken", "expireTime"}` (RFC 3339); refused in Google's
 * `{"error": {"code", "message", "status"}}`. Workload identity federation's STS token impersonates the service account
 * that the credential configuration names this way (external-account.ts), as does the source token of an
 * `impersonated_service_account` file (impersonated-service-account.ts), through its `delegates` when it names any: each
 * service account of the chain, `projects/-/serviceAccounts/{email}`, may impersonate the next.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { IssuedToken } from '../cached-token'
import { secondsUntil } from '../metadata-service'
import { TOKEN_TIMEOUT_MS, tokenRefused, tokenUnreachable } from '../token-endpoint'
import { VERTEX_SCOPE } from './credential-json'

const ENDPOINT = 'google iam credentials endpoint'

/**
 * The impersonated service account's token, for `lifetimeSeconds`. Throws as requestToken does: `upstream_auth` when
 * refused (400, 401, 403: the caller may not impersonate it), a retryable upstream error otherwise; `secrets` (the
 * caller's token among them) are cut from anything said.
 * @example await impersonatedToken('https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken', stsToken, 3600, [stsToken])
 */
export async function impersonatedToken(url: string, bearer: string, lifetimeSeconds: number, secrets: readonly string[], delegates: readonly string[] = []): Promise<IssuedToken> {
	// Named as the URL spells it (gcloud writes the address as it is): no decoding that a stray `%` could throw from.
	const account = /serviceAccounts\/([^/:]+)/.exec(url)?.[1] ?? 'the service account'
	const req = { endpoint: ENDPOINT, principal: `the impersonation of ${account}`, secrets }
	let res: Response
	try {
		res = await fetch(url, {
			method: 'POST',
			headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json' },
			body: JSON.stringify({ ...(delegates.length ? { delegates } : {}), scope: [VERTEX_SCOPE], lifetime: `${lifetimeSeconds}s` }),
			signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
			redirect: 'manual',
		})
	} catch (e) {
		throw tokenUnreachable(req, e)
	}
	let said: { accessToken?: unknown; expireTime?: unknown; error?: { status?: unknown; message?: unknown } } = {}
	try {
		said = JSON.parse(await res.text())
	} catch {
		// not JSON: the status speaks
	}
	if (!res.ok) throw tokenRefused(req, res.status, [said.error?.status, said.error?.message].filter((x) => typeof x === 'string').join(': '))
	if (typeof said.accessToken !== 'string' || !said.accessToken)
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: `${ENDPOINT} answered without accessToken` })
	return { token: said.accessToken, expiresIn: secondsUntil(said.expireTime) ?? lifetimeSeconds }
}
