import { afterAll, describe, expect, it } from 'bun:test'
import { healthcheck, probeUrl } from '../../../src/healthcheck'

describe('switchboard healthcheck', () => {
	it('should probe the address the server listens on, a wildcard on loopback', () => {
		expect(probeUrl({})).toBe('http://127.0.0.1:3000/health')
		expect(probeUrl({ PORT: '8080', HOST: '0.0.0.0' })).toBe('http://127.0.0.1:8080/health')
		expect(probeUrl({ HOST: '::' })).toBe('http://[::1]:3000/health')
		expect(probeUrl({ HOST: '10.1.2.3', PORT: '4000' })).toBe('http://10.1.2.3:4000/health')
		expect(probeUrl({ HOST: 'fd00::5' })).toBe('http://[fd00::5]:3000/health')
		expect(probeUrl({ TLS_CERT_FILE: '/etc/switchboard/cert.pem', TLS_KEY_FILE: '/etc/switchboard/key.pem', PORT: '443' })).toBe('https://127.0.0.1:443/health')
		// Read as the server reads them: a port it would refuse is refused here too, rather than probed.
		expect(() => probeUrl({ PORT: 'eighty' })).toThrow('PORT must be')
	})

	const servers: ReturnType<typeof Bun.serve>[] = []
	afterAll(() => {
		for (const s of servers) s.stop(true)
	})
	const serve = (status: number) => {
		const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{"status":"x"}', { status }) })
		servers.push(s)
		return { HOST: '127.0.0.1', PORT: String(s.port) }
	}

	it('should exit 0 on a 200 and 1 on a 503 or no server', async () => {
		expect(await healthcheck(serve(200))).toBe(0)
		expect(await healthcheck(serve(503))).toBe(1)
		const gone = serve(200)
		servers.pop()!.stop(true)
		expect(await healthcheck(gone)).toBe(1)
		expect(await healthcheck({ PORT: 'eighty' })).toBe(1)
	})
})
