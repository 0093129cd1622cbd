import { describe, expect, it } from 'bun:test'
import { REFRESH_MARGIN_MS, TokenCache } from '../../../src/providers/cached-token'

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
})
