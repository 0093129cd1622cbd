/**
 * A key's `rpm_limit` and `tpm_limit` hold across two gateway processes on one PostgreSQL, without Redis (the
 * buckets are in the database, src/limits/pg-buckets.ts) and with it: a key with rpm_limit N gets exactly N answers
 * within a minute, however its requests are spread over the instances and whatever runs at once, and the next is the
 * documented 429 in its protocol's shape with `retry-after`, on either instance. Tokens one instance counted hold on
 * the other, also once it has stopped (written out at shutdown).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { call, noteSkip, ON_POSTGRES, type Outcome, type Server, startPair } from './pair'

noteSkip(import.meta.path)

let oa: VendorMock
beforeAll(async () => {
	if (!ON_POSTGRES) return
	oa = await startOpenAIMock({ apiKey: 'up-o', record: false })
})
afterAll(async () => {
	await oa?.stop()
})

const config = (): GatewayConfig => ({
	channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-o', models: ['m-gpt'], model_map: { 'm-gpt': 'gpt-4o-mini' } }],
	models: [{ name: 'm-gpt', input_per_mtok: 10, output_per_mtok: 30 }],
})

/** The refusal each SDK saw is a 429 over the key's own limit, in its protocol's shape. */
function expectRateLimited(o: Outcome) {
	expect({ status: o.status, proto: o.proto }).toEqual({ status: 429, proto: o.proto })
	if (o.proto === 'messages') expect(o.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
	else expect(o.body).toMatchObject({ code: 'rate_limit_exceeded' })
}

/** A chat request straight to `server`: its status, retry-after and error. */
async function raw(server: Server, key: string) {
	const res = await fetch(`${server.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ model: 'm-gpt', max_tokens: 20, messages: [{ role: 'user', content: 'one more' }] }),
	})
	return { status: res.status, retryAfter: Number(res.headers.get('retry-after')), error: ((await res.json()) as { error?: { code?: string; message?: string } }).error }
}

for (const redis of [false, true]) {
	describe.skipIf(!ON_POSTGRES)(`a key's rate limits on two processes on one database, ${redis ? 'with' : 'without'} Redis`, () => {
		it('should admit exactly rpm_limit requests across both instances at once and refuse the next on either', async () => {
			const p = await startPair(import.meta.path, config(), { redis })
			try {
				const N = 5
				const { tokens } = await p.account(5, [{ rpm_limit: N }])
				const key = tokens[0]!.key
				// More than N for each instance, all at once, both protocols, streamed and not.
				const outcomes = await Promise.all(
					Array.from({ length: 2 * N + 2 }, (_, i) => call(i % 2 ? p.b : p.a, key, 'm-gpt', (i >> 1) % 2 ? 'messages' : 'chat', (i >> 2) % 2 === 1, `request ${i}`)),
				)
				expect(outcomes.filter((o) => o.status === 200).length).toBe(N)
				for (const o of outcomes) if (o.status !== 200) expectRateLimited(o)
				for (const server of [p.a, p.b]) {
					const r = await raw(server, key)
					expect(r.status).toBe(429)
					expect(r.error?.code).toBe('rate_limit_exceeded')
					expect(r.retryAfter).toBeGreaterThan(0)
					expect(r.retryAfter).toBeLessThanOrEqual(120)
				}
			} finally {
				await p.close()
			}
		}, 40_000)

		it('should refuse on one instance a key whose tokens per minute were used up on the other, also once that one stopped', async () => {
			const p = await startPair(import.meta.path, config(), { redis })
			try {
				// One answer of the mock uses more than 10 tokens (prompt and completion).
				const { tokens } = await p.account(5, [{ tpm_limit: 10 }])
				const key = tokens[0]!.key
				expect((await call(p.a, key, 'm-gpt', 'chat', false, 'count these tokens please')).status).toBe(200)
				// Stopped right after: its count reaches the database as it shuts down, if not before.
				expect(await p.stop(p.a)).toBe(0)
				const r = await raw(p.b, key)
				expect(r.status).toBe(429)
				expect(r.error?.message).toMatch(/tokens per minute/)
				expect(r.retryAfter).toBeGreaterThan(0)
			} finally {
				await p.close()
			}
		}, 40_000)
	})
}
