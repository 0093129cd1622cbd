/**
 * Ephemeral client secrets for the Realtime API (`ek_…`): what an app's server mints with its key so a browser can
 * open `/v1/realtime` without holding that key. The gateway's own, never the upstream's, and stateless, so any
 * instance sharing SECRET_KEY accepts it: the grant (key id and key fingerprint, model, session config, expiry) is
 * sealed with the server's AES-GCM cipher (authenticated: a changed byte fails to open). At connect the key is
 * looked up by id and checked as a presented key would be, so a secret dies with its key (disabled, deleted, expired
 * or reissued) and carries its account, limits, allowed models and spend limit.
 * Expiry as OpenAI documents it (`expires_after: { anchor: "created_at", seconds }`, 10–7200 s): the secret no
 * longer opens sessions after it; a session already open runs on.
 * @module
 */
import { eq } from 'drizzle-orm'
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { apiTokens } from '../../db/schema'
import type { Services } from '../../services'

export const CLIENT_SECRET_PREFIX = 'ek_'
/** OpenAI's bounds and default for `expires_after.seconds` (client_secrets; the beta's sessions default to a minute). */
export const MIN_TTL_SECONDS = 10
export const MAX_TTL_SECONDS = 7200
export const DEFAULT_TTL_SECONDS = 600
export const BETA_DEFAULT_TTL_SECONDS = 60
/**
 * Longest secret minted: it travels in a WebSocket subprotocol header, and servers refuse long headers (Bun's own
 * limit is 16 KiB for all of them). The session config rides inside, so a very long one is refused at creation.
 */
export const MAX_SECRET_CHARS = 8192

/** What a secret grants: the session config is applied upstream at connect. */
export type Grant = { model: string; session: Record<string, unknown>; expiresAt: number }

type Sealed = { use: 'realtime'; id: number; kid: string; model: string; session: Record<string, unknown>; exp: number }

export const isClientSecret = (key: string) => key.startsWith(CLIENT_SECRET_PREFIX)

/** `expires_after.seconds` checked against OpenAI's range; the expiry in seconds since the epoch. */
export function expiryOf(seconds: number | undefined, fallback: number, param: string, now = Date.now()): number {
	const s = seconds ?? fallback
	if (!Number.isInteger(s) || s < MIN_TTL_SECONDS || s > MAX_TTL_SECONDS)
		throw new GatewayError('invalid_request', `Invalid '${param}': ${s}. Expected a value between ${MIN_TTL_SECONDS} and ${MAX_TTL_SECONDS}.`, { code: 'invalid_value', param })
	return Math.floor(now / 1000) + s
}

/** Seals a grant for the key that asked; base64url so it is a valid subprotocol token. */
export async function mintClientSecret(svc: Services, token: AuthToken, grant: Grant): Promise<string> {
	const sealed: Sealed = { use: 'realtime', id: token.id, kid: token.keyId, model: grant.model, session: grant.session, exp: grant.expiresAt }
	const value = CLIENT_SECRET_PREFIX + Buffer.from(await svc.cipher.encrypt(JSON.stringify(sealed)), 'base64').toString('base64url')
	if (value.length > MAX_SECRET_CHARS)
		throw new GatewayError('invalid_request', `The session configuration is too large for a client secret (at most ${MAX_SECRET_CHARS} characters sealed): send the rest with session.update once connected`, {
			code: 'invalid_value',
			param: 'session',
		})
	return value
}

const invalid = (why: string) => new GatewayError('authentication', why, { code: 'invalid_api_key' })

/** Opens a presented secret: its key (checked as a presented key) and grant; 401 when it is not one, expired or revoked. */
export async function openClientSecret(svc: Services, value: string, now = Date.now()): Promise<{ token: AuthToken; grant: Grant }> {
	let sealed: Sealed
	try {
		sealed = JSON.parse(await svc.cipher.decrypt(Buffer.from(value.slice(CLIENT_SECRET_PREFIX.length), 'base64url').toString('base64')))
	} catch {
		throw invalid('Invalid client secret')
	}
	if (sealed?.use !== 'realtime' || typeof sealed.id !== 'number') throw invalid('Invalid client secret')
	if (sealed.exp * 1000 <= now) throw invalid(`Client secret expired at ${new Date(sealed.exp * 1000).toISOString()}`)
	const [row] = await svc.db.orm.select({ keyEnc: apiTokens.keyEnc }).from(apiTokens).where(eq(apiTokens.id, sealed.id)).limit(1)
	if (!row) throw invalid('Invalid client secret: its API key no longer exists')
	const key = await svc.cipher.decrypt(row.keyEnc)
	const token = svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
	// A key reissued under the same id: secrets minted with the old key die with it.
	if (token.keyId !== sealed.kid) throw invalid('Invalid client secret: its API key was replaced')
	return { token, grant: { model: sealed.model, session: sealed.session, expiresAt: sealed.exp } }
}
