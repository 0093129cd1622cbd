/**
 * Why a key is refused, in one place: the key cache (auth/api-key.ts) and the ledger (billing/ledger.ts, when the
 * database refuses a lease to a key the cache still took for usable) see the same key states, and a client must get
 * the same error for the same state whichever check saw it first. Checked in this order: unknown or deleted, disabled,
 * expired, its account disabled. Each protocol renders the error in its own shape (401; Gemini's as Google refuses an
 * API key, by `code`: protocols/gemini/error.ts).
 * @module
 */
import { GatewayError } from '../core/errors'

/** A key's state as stored: null when there is no such key. */
export type KeyState = { status: string; accountStatus: string; expiresAt: number | null } | null

/**
 * The 401 for a key in `state` at time `now`, or undefined when it is usable.
 * @example keyRefusal({ status: 'disabled', accountStatus: 'active', expiresAt: null }, Date.now())?.code === 'api_key_disabled'
 */
export function keyRefusal(state: KeyState, now: number): GatewayError | undefined {
	if (!state || state.status === 'deleted') return new GatewayError('authentication', 'Invalid API key', { code: 'invalid_api_key' })
	if (state.status !== 'active') return new GatewayError('authentication', 'API key is disabled', { code: 'api_key_disabled' })
	if (state.expiresAt !== null && state.expiresAt <= now)
		return new GatewayError('authentication', `API key expired at ${new Date(state.expiresAt).toISOString()}`, { code: 'api_key_expired' })
	// As OpenAI answers a key of a deactivated account: 401 `account_deactivated`.
	if (state.accountStatus !== 'active') return new GatewayError('authentication', 'The account of this API key is disabled', { code: 'account_disabled' })
	return undefined
}
