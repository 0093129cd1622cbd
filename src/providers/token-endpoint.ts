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
const TOKEN_TIMEOUT_MS = 30_000

export type TokenRequest = {
	/** The endpoint's name in details: `vertex token endpoint`, `azure entra token endpoint`. */
	endpoint: string
	/** Who asked, in the refusal's detail: `the service account a@p.iam.gserviceaccount.com`. */
	principal: string
	/** Values cut from anything said (a client secret the endpoint might repeat). */
	secrets: readonly string[]
	/** Seconds a token lives when the answer does not say. */
	defaultExpiresIn: number
}

/**
 * POSTs `form` to `url` and reads the token. Throws GatewayError: `upstream_auth` when the endpoint refuses the
 * credentials (400 invalid_grant / invalid_request, 401 invalid_client, 403: no call on the channel can work), a
 * retryable upstream error when it fails otherwise (unreachable, 429, 5xx, an answer without a token).
 * @example await requestToken('https://login.microsoftonline.com/TENANT/oauth2/v2.0/token', { grant_type: 'client_credentials', … }, { endpoint: 'azure entra token endpoint', principal: 'the client …', secrets: [secret], defaultExpiresIn: 3600 })
 */
export async function requestToken(url: string, form: Record<string, string>, req: TokenRequest): Promise<IssuedToken> {
	const clean = (text: string) => withoutCredentials(text, req.secrets).slice(0, 500)
	let res: Response
	try {
		res = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
			body: new URLSearchParams(form).toString(),
			signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
			redirect: 'manual',
		})
	} catch (e) {
		throw new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: clean(`${req.endpoint}: ${(e as Error).message ?? e}`) })
	}
	const text = await res.text().catch(() => '')
	let said: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {}
	try {
		said = JSON.parse(text)
	} catch {
		// not JSON: the status speaks
	}
	if (!res.ok) {
		// Only the OAuth error's own two members: the endpoint's other words are not repeated anywhere.
		const why = [said.error, said.error_description].filter((x) => typeof x === 'string').join(': ') || `HTTP ${res.status}`
		const detail = clean(`${req.endpoint} refused ${req.principal}: ${why}`)
		if (res.status === 400 || res.status === 401 || res.status === 403)
			throw new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail })
		throw new GatewayError('upstream', `the upstream provider failed (HTTP ${res.status})`, { retryable: true, code: 'upstream_error', detail })
	}
	if (typeof said.access_token !== 'string' || !said.access_token)
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: `${req.endpoint} answered without access_token` })
	return { token: said.access_token, expiresIn: secondsOf(said.expires_in) ?? req.defaultExpiresIn }
}

/** `expires_in` as a number of seconds: a number, or a numeric string (Entra's v1.0 endpoint sends `"3599"`). */
function secondsOf(v: unknown): number | undefined {
	const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN
	return n > 0 ? n : undefined
}
