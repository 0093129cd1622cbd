/**
 * Google's clients may pass the API key as `?key=` (https://ai.google.dev/api#api-keys), on every method: the README
 * takes it so. The list routes' closed query schemas refused it (400 `"key" Unexpected property`) on files, batches,
 * cached contents and an interaction's read, though the same key in `x-goog-api-key` was served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Matrix, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

describe('the API key as ?key= on the Gemini routes that read a query', () => {
	for (const [path, served] of [
		['/v1beta/files', 200],
		['/v1/files', 200],
		['/v1beta/files?pageSize=5', 200],
		['/v1beta/batches', 200],
		['/v1beta/cachedContents', 200],
		['/v1beta/models', 200],
		['/v1beta/interactions/v1_none', 404],
	] as const)
		it(`should serve ${path} as with the key in x-goog-api-key`, async () => {
			const acct = await m.account()
			const header = await fetch(`${m.app.url}${path}`, { headers: { 'x-goog-api-key': acct.key } })
			const query = await fetch(`${m.app.url}${path}${path.includes('?') ? '&' : '?'}key=${acct.key}`)
			const [h, q] = [await header.json(), await query.json()]
			expect({ path, status: header.status }).toEqual({ path, status: served })
			expect({ path, status: query.status, body: q }).toEqual({ path, status: served, body: h })
		})
})
