/** deferredApp: the rarely used routes' app is built once, at the first request, and again after a failed build. */
import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { deferredApp } from '../../../src/http/deferred-app'

const get = (path: string) => new Request(`http://localhost${path}`)

describe('deferredApp', () => {
	it('should build nothing before its first request, then once for concurrent ones', async () => {
		let builds = 0
		const later = deferredApp(/^\/x$/, async () => {
			builds++
			await Bun.sleep(5)
			return new Elysia().get('/x', () => 'x')
		})
		expect(later.built).toBe(false)
		expect(builds).toBe(0)
		const answers = await Promise.all([later.handle(get('/x')), later.handle(get('/x')), later.handle(get('/x'))])
		expect(await Promise.all(answers.map((r) => r.text()))).toEqual(['x', 'x', 'x'])
		expect(await (await later.handle(get('/x'))).text()).toBe('x')
		expect(builds).toBe(1)
		expect(later.built).toBe(true)
		expect([later.serves('/x'), later.serves('/y')]).toEqual([true, false])
	})

	it('should try again at the next request after a build failed', async () => {
		let builds = 0
		const later = deferredApp(/^\/x$/, async () => {
			if (++builds === 1) throw new Error('import failed')
			return new Elysia().get('/x', () => 'x')
		})
		expect(later.handle(get('/x'))).rejects.toThrow('import failed')
		await Bun.sleep(0)
		expect(later.built).toBe(false)
		expect(await (await later.handle(get('/x'))).text()).toBe('x')
		expect(builds).toBe(2)
	})
})
