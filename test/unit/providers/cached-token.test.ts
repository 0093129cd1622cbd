import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { REFRESH_MARGIN_MS, TokenCache } from '../../../src/providers/cached-token'
import { requestToken } from '../../../src/providers/token-endpoint'
import { watchLateness } from '../../helpers/lateness'

/** A token endpoint stand-in: counts fetches, each answered after `gate` resolves (or at once). */
function issuer(expiresIn = 3600) {
	let n = 0
	let gate: Promise<void> = Promise.resolve()
	let open: () => void = () => {}
	return {
		get fetches() {
			return n
		},
		hold() {
			gate = new Promise((r) => (open = r))
		},
		release: () => open(),
		fetch: async () => {
			const i = ++n
			await gate
			return { token: `t${i}`, expiresIn }
		},
	}
}

describe('TokenCache', () => {
	it('should fetch once for the calls that wait meanwhile, and reuse the token after', async () => {
		const c = new TokenCache()
		const t = issuer()
		t.hold()
		const waiting = Promise.all([c.get(1, 'k', t.fetch), c.get(1, 'k', t.fetch), c.get(1, 'k', t.fetch)])
		t.release()
		expect(await waiting).toEqual(['t1', 't1', 't1'])
		expect(await c.get(1, 'k', t.fetch)).toBe('t1')
		expect(t.fetches).toBe(1)
	})

	it('should keep a token per channel, and start over when the channel key changes', async () => {
		const c = new TokenCache()
		const t = issuer()
		expect(await c.get(1, 'k', t.fetch)).toBe('t1')
		expect(await c.get(2, 'k', t.fetch)).toBe('t2')
		expect(await c.get(1, 'edited', t.fetch)).toBe('t3')
	})

	it('should not use a token within the refresh margin of its expiry', async () => {
		const c = new TokenCache()
		const t = issuer(REFRESH_MARGIN_MS / 1000)
		await c.get(1, 'k', t.fetch)
		await c.get(1, 'k', t.fetch)
		expect(t.fetches).toBe(2)
	})

	it('should not cache a failed fetch', async () => {
		const c = new TokenCache()
		const t = issuer()
		await expect(c.get(1, 'k', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused')
		expect(await c.get(1, 'k', t.fetch)).toBe('t1')
	})

	it('should drop a refused token, and let a call refused with a replaced one try again too', async () => {
		const c = new TokenCache()
		const t = issuer()
		expect(c.drop(1, 't0')).toBe(false)
		const stale = await c.get(1, 'k', t.fetch)
		// Two calls were refused with it: the first drops it and fetches another...
		expect(c.drop(1, stale)).toBe(true)
		expect(await c.get(1, 'k', t.fetch)).toBe('t2')
		// ...the second, refused with the same stale token, may try again with the new one, which stays.
		expect(c.drop(1, stale)).toBe(true)
		expect(await c.get(1, 'k', t.fetch)).toBe('t2')
		expect(t.fetches).toBe(2)
	})

	it("should stop one call's wait when its client aborts, the shared fetch going on for the others", async () => {
		// A slow token endpoint (OAuth 2.0 token answer after 400 ms).
		let asked = 0
		const endpoint = Bun.serve({
			hostname: '127.0.0.1',
			port: 0,
			async fetch() {
				asked++
				await Bun.sleep(400)
				return Response.json({ access_token: 'slow-token', token_type: 'Bearer', expires_in: 3600 })
			},
		})
		try {
			const c = new TokenCache()
			const fetch = () => requestToken(`http://127.0.0.1:${endpoint.port}/token`, { grant_type: 'client_credentials' }, { endpoint: 'test token endpoint', principal: 'p', secrets: [], defaultExpiresIn: 3600 })
			const leaving = new AbortController()
			const started = performance.now()
			const lateness = watchLateness()
			const left = c.get(1, 'k', fetch, leaving.signal).then(
				() => 'resolved',
				(e: unknown) => e,
			)
			const staying = c.get(1, 'k', fetch, new AbortController().signal)
			await Bun.sleep(50)
			leaving.abort()
			const e = await left
			// The call whose client left stops waiting at once, with the relay's client-closed error.
			expect(performance.now() - started).toBeLessThan(300 + lateness.stop())
			expect(e).toBeInstanceOf(GatewayError)
			expect(e).toMatchObject({ code: 'client_closed' })
			// The other gets the token of the one fetch, which went on; the next call reuses it.
			expect(await staying).toBe('slow-token')
			expect(await c.get(1, 'k', fetch)).toBe('slow-token')
			expect(asked).toBe(1)
			// A call whose client had already left does not wait at all.
			const gone = new AbortController()
			gone.abort()
			c.drop(1, 'slow-token')
			expect(await c.get(1, 'k', fetch, gone.signal).catch((x: GatewayError) => x.code)).toBe('client_closed')
		} finally {
			endpoint.stop(true)
		}
	})
})
