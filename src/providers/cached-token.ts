/**
 * OAuth access tokens of channels whose key is exchanged for one (Vertex AI's service accounts,
 * google/service-account.ts; Azure's Entra ID service principals, azure-entra.ts): cached per channel until shortly
 * before they expire, fetched once for every call that waits on them meanwhile, and dropped when the vendor refuses
 * one (revoked, or expired early) so that the next call fetches another. A call whose client leaves stops waiting for
 * the fetch, which goes on for the others (it has its own timeout: token-endpoint.ts).
 * @module
 */
import { clientClosed } from '../core/errors'

/**
 * What a token endpoint issued: the token, and how many seconds it lives (`expires_in`). A token is a string (an OAuth
 * access token) or, for AWS's temporary credentials, the key set they are.
 */
export type IssuedToken<T = string> = { token: T; expiresIn: number }

/**
 * A token is refreshed this long before its issuer says it expires (google-auth-library's eager refresh is 5 minutes,
 * as is MSAL's): a call that starts with it must not meet its end upstream.
 */
export const REFRESH_MARGIN_MS = 5 * 60_000

type Entry<T> = {
	/** The channel key the token belongs to: an edited key starts over. */
	key: string
	token?: T
	/** performance.now() past which the token is not used. */
	freshUntil: number
	pending?: Promise<T>
}

/**
 * The tokens of one kind of credential, per channel. One entry per channel for the life of the process (channels are few).
 * @example const tokens = new TokenCache(); await tokens.get(ch.id, ch.apiKey, () => fetchToken(…))
 */
export class TokenCache<T = string> {
	private readonly entries = new Map<number, Entry<T>>()

	/**
	 * The channel's token: the cached one while fresh, else the one `fetch` gets, a single fetch shared by every call
	 * that asks meanwhile. A failed fetch is not cached: the next call tries again. When `signal` (the call's client)
	 * aborts, this call's wait ends with the client-closed error; the shared fetch is not cancelled.
	 */
	get(channelId: number, channelKey: string, fetch: () => Promise<IssuedToken<T>>, signal?: AbortSignal): Promise<T> {
		if (signal?.aborted) return Promise.reject(clientClosed())
		let e = this.entries.get(channelId)
		if (!e || e.key !== channelKey) {
			e = { key: channelKey, freshUntil: 0 }
			this.entries.set(channelId, e)
		}
		if (e.token && performance.now() < e.freshUntil) return Promise.resolve(e.token)
		if (e.pending) return waitFor(e.pending, signal)
		const entry = e
		entry.pending = fetch()
			.then(({ token, expiresIn }) => {
				entry.token = token
				entry.freshUntil = performance.now() + expiresIn * 1000 - REFRESH_MARGIN_MS
				return token
			})
			.finally(() => {
				entry.pending = undefined
			})
		return waitFor(entry.pending, signal)
	}

	/**
	 * Forgets the channel's token when it is `token` (the vendor refused it), so the next call fetches another. True
	 * when a call made again may get another token: this one was dropped, or a concurrent call already replaced it (or
	 * is fetching its replacement); false for a channel that has none (nothing to renew).
	 */
	drop(channelId: number, token: T): boolean {
		return this.dropWhere(channelId, (t) => t === token)
	}

	/** {@link drop} for the token `refused` matches (AWS's credentials, known by the access key id a signature names). */
	dropWhere(channelId: number, refused: (token: T) => boolean): boolean {
		const e = this.entries.get(channelId)
		if (!e) return false
		if (e.token !== undefined && refused(e.token)) {
			e.token = undefined
			e.freshUntil = 0
		}
		return true
	}
}

/** `shared`, or the client-closed error once `signal` aborts, whichever comes first (`shared` runs on either way). */
function waitFor<T>(shared: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
	if (!signal) return shared
	const { promise, resolve, reject } = Promise.withResolvers<T>()
	const left = () => reject(clientClosed())
	signal.addEventListener('abort', left, { once: true })
	shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', left))
	return promise
}
