/**
 * The server does not share its port (src/server.ts `listenOptions`): Elysia's Bun adapter listens with SO_REUSEPORT
 * by default, and a second gateway on the same port then listened too, the kernel splitting connections between them.
 */
import { afterEach, describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { loadEnv } from '../../../src/config/env'
import { listenOptions } from '../../../src/server'

const stops: (() => unknown)[] = []
afterEach(async () => {
	for (const stop of stops.splice(0)) await stop()
})
const app = () => {
	const a = new Elysia().get('/', () => 'ok')
	stops.push(() => a.server && a.stop(true))
	return a
}
const env = loadEnv({ HOST: '127.0.0.1', PORT: '0' })

describe('listen', () => {
	it('should fail to listen on a port another server of ours holds', () => {
		const first = app().listen(listenOptions(env))
		const port = first.server!.port
		expect(() => app().listen({ ...listenOptions(env), port })).toThrow(expect.objectContaining({ code: 'EADDRINUSE' }))
	})

	it('should fail to listen on a port held by a server that shares its port (a gateway before this fix)', () => {
		const first = app().listen({ hostname: '127.0.0.1', port: 0 })
		expect(() => app().listen({ ...listenOptions(env), port: first.server!.port })).toThrow(expect.objectContaining({ code: 'EADDRINUSE' }))
	})

	it("should need the option: Elysia's default lets a second server take the same port", () => {
		const first = app().listen({ hostname: '127.0.0.1', port: 0 })
		const second = app().listen({ hostname: '127.0.0.1', port: first.server!.port })
		expect(second.server!.port).toBe(first.server!.port)
	})
})
