/**
 * One OAuth 2.0 token request (RFC 6749 §4.4 and §5; RFC 7523's JWT bearer grant goes the same way): a form POSTed to
 * the token endpoint, answered `{access_token, token_type, expires_in}` or refused `{error, error_description}`.
 * Shared by Vertex AI's service accounts (https://developers.google.com/identity/protocols/oauth2/service-account#httprest)
 * and Entra ID's client credentials (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow).
 * A refusal is the channel's failure, worded for the operator without the credentials it was sent.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { IssuedToken } from './cached-token'
import { withoutCredentials } from '../relay/sent-credentials'

/** A token endpoint that does not answer within this fails the call (the channel's own timeouts do not cover this fetch). */
export const TOKEN_TIMEOUT_MS = 30_000

export type TokenRequest = {
	/** The endpoint's name in details: `vertex token endpoint`, `azure entra token endpoint`. */
	endpoint: string
	/** Who asked, in the refusal's detail: `the service account a@p.iam.gserviceaccount.com`. */
	principal: string
	/** Values cut from anything said (a client secret the endpoint might repeat). */
	secrets: readonly string[]
	/** Seconds a token lives when the answer does not say. */
	defaultExpiresIn: number
	/** Headers besides the form's: the client's Basic authentication (RFC 6749 §2.3.1), where it goes in a header. */
	headers?: Record<string, string>
}

/**
 * POSTs `form` to `url` and reads the token. Throws GatewayError: `upstream_auth` when the endpoint refuses the
 * credentials (400 invalid_grant / invalid_request, 401 invalid_client, 403: no call on the channel can work), a
 * retryable upstream error when it fails otherwise (unreachable, 429, 5xx, an answer without a token).
 * @example await requestToken('https://login.microsoftonline.com/TENANT/oauth2/v2.0/token', { grant_type: 'client_credentials', … }, { endpoint: 'azure entra token endpoint', principal: 'the client …', secrets: [secret], defaultExpiresIn: 3600 })
 */
export async function requestToken(url: string, form: Record<string, string>, req: TokenRequest): Promise<IssuedToken> {
	let res: Response
	try {
		res = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...req.headers },
			body: new URLSearchParams(form).toString(),
			signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
			redirect: 'manual',
		})
	} catch (e) {
		throw tokenUnreachable(req, e)
	}
	const text = await res.text().catch(() => '')
	let said: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {}
	try {
		said = JSON.parse(text)
	} catch {
		// not JSON: the status speaks
	}
	// Only the OAuth error's own two members: the endpoint's other words are not repeated anywhere.
	if (!res.ok) throw tokenRefused(req, res.status, [said.error, said.error_description].filter((x) => typeof x === 'string').join(': '))
	if (typeof said.access_token !== 'string' || !said.access_token)
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: `${req.endpoint} answered without access_token` })
	return { token: said.access_token, expiresIn: secondsOf(said.expires_in) ?? req.defaultExpiresIn }
}

/** Cut to 500 characters, without any of the request's secrets. */
const cleaned = (req: Pick<TokenRequest, 'secrets'>, text: string) => withoutCredentials(text, req.secrets).slice(0, 500)

/** A token endpoint out of reach: retryable, the channel cooled down rather than disabled. */
export const tokenUnreachable = (req: Pick<TokenRequest, 'endpoint' | 'secrets'>, e: unknown) =>
	new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: cleaned(req, `${req.endpoint}: ${(e as Error).message ?? e}`) })

/**
 * A token endpoint's refusal, `why` in its own words (or the status): `upstream_auth` for 400, 401 and 403 (no call on
 * the channel can work), a retryable upstream error otherwise (429, 5xx).
 */
export function tokenRefused(req: Pick<TokenRequest, 'endpoint' | 'principal' | 'secrets'>, status: number, why: string): GatewayError {
	const detail = cleaned(req, `${req.endpoint} refused ${req.principal}: ${why || `HTTP ${status}`}`)
	if (status === 400 || status === 401 || status === 403)
		return new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail })
	return new GatewayError('upstream', `the upstream provider failed (HTTP ${status})`, { retryable: true, code: 'upstream_error', detail })
}

/** `expires_in` as a number of seconds: a number, or a numeric string (Entra's v1.0 endpoint sends `"3599"`). */
function secondsOf(v: unknown): number | undefined {
	const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN
	return n > 0 ? n : undefined
}
