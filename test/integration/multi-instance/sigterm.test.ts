/**
 * One of two gateway processes stopped with SIGTERM while streams run through it (a rolling deploy): the stream that
 * ends within SHUTDOWN_GRACE_MS is billed in full, the one still running then is cut and billed for what it used
 * (`end_reason` `shutdown`), each once, and the money the stopped instance had leased of the key goes back, so the
 * other instance can spend the key's limit to its end, and no further.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { anthropic, books, call, keyBooks, noteSkip, ON_POSTGRES, openai, type Pair, startPair } from './pair'

noteSkip(import.meta.path)

let slow: VendorMock
let fast: VendorMock
beforeAll(async () => {
	if (!ON_POSTGRES) return
	// A streamed answer is one chunk per word: 100 ms apart for model `m`, at once for `quick`.
	slow = await startOpenAIMock({ apiKey: 'up-o', chunkDelayMs: 100, record: false })
	fast = await startOpenAIMock({ apiKey: 'up-o', record: false })
})
afterAll(async () => {
	await slow?.stop()
	await fast?.stop()
})

const config = (): GatewayConfig => ({
	channels: [
		{ name: 'slow', type: 'openai', base_url: slow.url, api_key: 'up-o', models: ['m'], model_map: { m: 'gpt-4o-mini' } },
		{ name: 'fast', type: 'openai', base_url: fast.url, api_key: 'up-o', models: ['quick'], model_map: { quick: 'gpt-4o-mini' } },
	],
	models: ['m', 'quick'].map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
})

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')

for (const redis of [true, false]) {
	describe.skipIf(!ON_POSTGRES)(`SIGTERM to one of two instances mid-stream (${redis ? 'with' : 'without'} Redis)`, () => {
		let p: Pair
		beforeAll(async () => {
			p = await startPair(import.meta.path, config(), { redis, env: { SHUTDOWN_GRACE_MS: '1500' } })
		}, 30_000)
		afterAll(() => p?.close())

		it('should bill the finished and the cut stream once each, give back its lease, and let the other instance spend the rest of the limit', async () => {
			const limit = 30_000
			const { accountId, tokens } = await p.account(5, [{ spend_limit: limit / 1e6 }])
			const key = tokens[0]!.key
			// Each reserves its max_tokens' worth (≈12,000 micro-USD) from A's lease of the key.
			const short = (async () => {
				let text = ''
				for await (const c of await openai(p.a, key).chat.completions.create({ model: 'm', max_tokens: 400, stream: true, messages: [{ role: 'user', content: words(5) }] }))
					text += c.choices[0]?.delta.content ?? ''
				return text
			})()
			let chunks = 0
			let started!: () => void
			const running = new Promise<void>((r) => (started = r))
			const long = (async () => {
				try {
					const s = await anthropic(p.a, key).messages.create({ model: 'm', max_tokens: 400, stream: true, messages: [{ role: 'user', content: words(60) }] })
					for await (const e of s) if (e.type === 'content_block_delta' && ++chunks === 3) started()
					return 'ended'
				} catch (e) {
					return `cut: ${String(e)}`
				}
			})()
			await running
			const exit = p.stop(p.a)
			expect(await short).toContain('word4')
			const ended = await long
			expect(await exit).toBe(0)
			// Cut at the end of the grace period: 6 s of answer left.
			expect(chunks).toBeLessThan(40)
			// The client learns its answer is incomplete, never a clean end: from the stream's error event (a retryable
			// overload, as the Anthropic SDK reads it), not from a connection reset.
			expect(ended).toStartWith('cut:')
			expect(ended).toContain('overloaded_error')
			expect(ended).not.toContain('ECONNRESET')

			const rows = await p.dep.withDb((db) => db.sql.query<{ end_reason: string; cost: string; request_id: string }>('SELECT end_reason, cost, request_id FROM usage_logs WHERE account_id = $1 ORDER BY id', [accountId]))
			expect(rows.map((r) => r.end_reason).sort()).toEqual(['ok', 'shutdown'])
			expect(new Set(rows.map((r) => r.request_id)).size).toBe(2)
			expect(rows.every((r) => Number(r.cost) > 0)).toBe(true)
			// Nothing of A's is left holding the key's money.
			let k = await keyBooks(p.dep, tokens[0]!.id)
			expect(k.reserved).toBe(0)
			expect(k.spent).toBe(k.used)
			const spentByA = k.spent

			// B spends what is left of the limit, the money A held included, in waves of ten until a wave is refused.
			let answered = 0
			for (let wave = 0; wave < 30; wave++) {
				const outs = await Promise.all(Array.from({ length: 10 }, (_, i) => call(p.b, key, 'quick', i % 2 ? 'messages' : 'chat', i % 3 === 0, `after the restart ${wave} ${i}`)))
				for (const o of outs) if (o.status !== 200) expect(o.status).toBe(402)
				answered += outs.filter((o) => o.status === 200).length
				if (outs.every((o) => o.status !== 200)) break
			}
			expect(answered).toBeGreaterThan(0)
			expect(await p.stop(p.b)).toBe(0)
			k = await keyBooks(p.dep, tokens[0]!.id)
			expect(k.spent).toBeLessThanOrEqual(limit)
			// B was refused only near the limit: the 24,000 A reserved for the two streams came back to the key.
			expect(limit - k.spent).toBeLessThan(1_500)
			expect(k.spent - spentByA).toBeGreaterThan(limit - spentByA - 1_500)
			const s = await books(p.dep, accountId)
			expect({ leases: s.leases, balance: s.balance }).toEqual({ leases: 0, balance: 5_000_000 - s.usageCost })
			expect(s.usageRows).toBe(2 + answered)
		}, 40_000)
	})
}
