/**
 * DNS rebinding over https: the guard resolves a client's URL, checks the addresses, and the request must then go to
 * the address it checked, not to whatever a second lookup by `fetch` answers. The name stays the TLS server name, so
 * the certificate is still verified for it. Bun.dns.lookup is replaced to answer for a name the system resolver does
 * not know: a request that resolved the name again would fail.
 * (test/fixtures/tls: a self-signed certificate for pics.example, valid for 100 years.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { checkHost, safeFetch } from '../../../src/lib/safe-fetch'
import { guardedFetch } from '../../../src/mcp/guard'

const dir = `${import.meta.dir}/../../fixtures/tls`
const ca = await Bun.file(`${dir}/pics.example.crt`).text()
const seen: string[] = []
let server: ReturnType<typeof Bun.serve>
const lookup = Bun.dns.lookup
beforeAll(() => {
	server = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		tls: { cert: Bun.file(`${dir}/pics.example.crt`), key: Bun.file(`${dir}/pics.example.key`) },
		fetch(req) {
			seen.push(req.headers.get('host') ?? '')
			return new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47]), { headers: { 'content-type': 'image/png' } })
		},
	})
	// Only the names of this test; anything else as before.
	Bun.dns.lookup = (async (host: string, opts: never) =>
		host === 'pics.example' || host === 'other.example' ? [{ address: '127.0.0.1', family: 4, ttl: 60 }] : lookup(host, opts)) as typeof Bun.dns.lookup
})
afterAll(() => {
	Bun.dns.lookup = lookup
	server.stop(true)
})

const guard = { allow: ['pics.example', 'other.example'] }

describe('safeFetch over https', () => {
	it('should connect to the address it checked, with the name as Host and TLS server name', async () => {
		const r = await safeFetch(`https://pics.example:${server.port}/cat.png`, guard, { maxBytes: 1024, timeoutMs: 5000, init: { tls: { ca } } as RequestInit })
		expect([...r.bytes]).toEqual([0x89, 0x50, 0x4e, 0x47])
		expect(r.contentType).toBe('image/png')
		expect(seen.at(-1)).toBe(`pics.example:${server.port}`)
	})

	it("should still refuse a certificate that is not the name's", async () => {
		const r = safeFetch(`https://other.example:${server.port}/cat.png`, guard, { maxBytes: 1024, timeoutMs: 5000, init: { tls: { ca } } as RequestInit })
		await expect(r).rejects.toMatchObject({ code: 'url_fetch_failed' })
	})
})

describe("the MCP transport's fetch over https", () => {
	it('should connect to the address it checked, with the name as Host and TLS server name', async () => {
		const res = await guardedFetch(guard, 1024)(`https://pics.example:${server.port}/mcp`, { tls: { ca } } as RequestInit)
		expect(res.status).toBe(200)
		expect(seen.at(-1)).toBe(`pics.example:${server.port}`)
	})
})

describe('checkHost', () => {
	it('should pin to an IPv4 address when the name has both kinds (many hosts have no IPv6 route)', async () => {
		const saved = Bun.dns.lookup
		Bun.dns.lookup = (async () => [
			{ address: '2606:4700::6810:84e5', family: 6, ttl: 60 },
			{ address: '104.16.132.229', family: 4, ttl: 60 },
		]) as unknown as typeof Bun.dns.lookup
		try {
			expect(await checkHost(new URL('https://dual.example/x.png'), { allow: [] })).toBe('104.16.132.229')
		} finally {
			Bun.dns.lookup = saved
		}
	})
})
