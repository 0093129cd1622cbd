/**
 * The default body limit is Anthropic's own (32 MB on its Messages endpoint): an agent's turn that carries screenshots
 * (Claude Code's, ~24 MB here) reaches the vendor through the gateway as it would directly, and one past the limit is
 * refused 413 in the caller's shape, as Anthropic refuses it, before any upstream call or charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { pngOf } from '../../helpers/png'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

/** A real 1280x800 PNG made `bytes` long by an ancillary chunk image readers skip (a screenshot's size, not its pixels). */
function screenshot(bytes: number, shade: number): string {
	const png = pngOf(1280, 800, shade)
	const pad = new Uint8Array(12 + bytes - png.length)
	new DataView(pad.buffer).setUint32(0, pad.length - 12)
	pad.set(new TextEncoder().encode('zpAd'), 4)
	// Before IEND (the last 12 bytes).
	const out = new Uint8Array(png.length + pad.length)
	out.set(png.subarray(0, png.length - 12))
	out.set(pad, png.length - 12)
	out.set(png.subarray(png.length - 12), png.length - 12 + pad.length)
	return Buffer.from(out).toString('base64')
}

const turn = (shots: string[]): Anthropic.MessageParam[] => [
	{ role: 'user', content: [...shots.map((data) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data } })), { type: 'text', text: 'What changed between these screens?' }] },
]

describe('a large agent turn', () => {
	it('should reach Claude as it came at ~24 MB', async () => {
		const acct = await m.account()
		const shots = [1, 2, 3].map((i) => screenshot(6 * 1024 * 1024, 100 + i))
		const r = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 64, messages: turn(shots) })
		expect(r.type).toBe('message')
		const seen = lastRequest(m.mocks.anthropic)
		expect((seen.text ?? '').length).toBeGreaterThan(24 * 1024 * 1024)
		expect(seen.body.messages[0].content.map((b: { source?: { data: string } }) => b.source?.data)).toEqual([...shots, undefined])
		expect((await usageRows(m, acct.accountId)).map((x) => x.model)).toEqual([MODEL.anthropic])
	})

	it('should be refused 413 past 32 MiB, before any upstream call or charge', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const shots = [1, 2, 3, 4, 5].map((i) => screenshot(5 * 1024 * 1024, 100 + i))
		const err = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 64, messages: turn(shots) }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(413)
		expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
		expect(m.mocks.anthropic.requests.length).toBe(before)
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})
})
