/**
 * Reservations of Anthropic message threads (beta `message-threads-2026-08-12`) on the Claude path, with
 * `@anthropic-ai/sdk` against the Anthropic mock (which keeps threads: test/mocks/anthropic/threads.ts). A continue
 * sends only its new messages, but the vendor bills the whole thread as its input: the gateway reserves the thread's
 * size as last reported plus the new messages, so a key near its spend limit cannot spend past it; and only the
 * account a thread was answered to may continue it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startTestApp, type TestApp } from '../../helpers/app'
import { purgeMessageThreads, THREAD_RECORD_HOURS } from '../../../src/modules/messages/threads'
import { countWords, startAnthropicMock, type VendorMock } from '../../mocks'

const BETA = 'message-threads-2026-08-12'
const MODEL = 'claude-sonnet-5'

let mock: VendorMock
let app: TestApp

beforeAll(async () => {
	mock = await startAnthropicMock({ apiKey: 'up-an' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'claude', type: 'anthropic', base_url: mock.url, api_key: 'up-an', models: [MODEL] }],
			// A thousandth of a dollar a token (1,000 micro-USD), in and out: the mock counts tokens as words.
			models: [{ name: MODEL, input_per_mtok: 1000, output_per_mtok: 1000 }],
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await mock.stop()
})

const TOKEN = 1000
const client = async () => {
	const a = await app.account(100)
	return { ...a, anthropic: new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 }) }
}
const spentOf = async (tokenId: number) => {
	await app.svc.ledger.flush()
	return Math.round(Number((await app.admin(`/api/tokens/${tokenId}`)).body.spent) * 1e6)
}
/** Leaves the key `room` micro-USD under its spend limit. */
const limitRoom = async (tokenId: number, room: number) => {
	const limit = (await spentOf(tokenId)) + room
	expect((await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { spend_limit: limit / 1e6 } })).status).toBe(200)
	return limit
}
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as InstanceType<typeof Anthropic.APIError>)

describe('message thread reservations (Claude path)', () => {
	for (const stream of [false, true])
		it(`should reserve a continue for the whole thread, refusing it when the key's limit cannot cover that, and allow it when it can (create ${stream ? 'streamed' : 'not streamed'})`, async () => {
			const a = await client()
			const words = 'word '.repeat(300).trim()
			const params = { model: MODEL, max_tokens: 400, messages: [{ role: 'user' as const, content: words }], thread: { type: 'create' as const }, betas: [BETA] }
			const first = stream ? await a.anthropic.beta.messages.stream(params).finalMessage() : await a.anthropic.beta.messages.create(params)
			// The thread now holds the 300 words and the answer that echoes them.
			const size = first.usage.input_tokens + first.usage.output_tokens
			expect(size).toBe(300 + countWords(`Hello! You said: ${words}`))

			const cont = { model: MODEL, max_tokens: 50, messages: [{ role: 'user' as const, content: 'and then?' }], thread: { type: 'continue' as const, previous_message_id: first.id }, betas: [BETA] }
			// Room for the new messages and their answer, not for the thread the vendor would bill with them.
			const tight = await limitRoom(a.tokenId, 300 * TOKEN)
			const calls = mock.requests.length
			const refused = await failure(a.anthropic.beta.messages.create(cont))
			expect(refused).toBeInstanceOf(Anthropic.APIError)
			expect(refused!.status).toBe(402)
			expect(refused!.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } })
			expect(mock.requests.length).toBe(calls)
			expect(await spentOf(a.tokenId)).toBeLessThanOrEqual(tight)

			// Room for the thread too: the continue runs, billed as the vendor reports it (the whole thread as input).
			const limit = await limitRoom(a.tokenId, (size + 100) * TOKEN)
			const before = await spentOf(a.tokenId)
			const second = await a.anthropic.beta.messages.create(cont)
			expect(second.usage.input_tokens).toBe(size + 2)
			expect((await spentOf(a.tokenId)) - before).toBe((second.usage.input_tokens + second.usage.output_tokens) * TOKEN)
			expect(await spentOf(a.tokenId)).toBeLessThanOrEqual(limit)
		})

	it('should reserve a later continue for the thread as it grew, turn by turn', async () => {
		const a = await client()
		const first = await a.anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }], thread: { type: 'create' }, betas: [BETA] })
		const second = await a.anthropic.beta.messages.create({
			model: MODEL,
			max_tokens: 400,
			messages: [{ role: 'user', content: 'many '.repeat(200).trim() }],
			thread: { type: 'continue', previous_message_id: first.id },
			betas: [BETA],
		})
		const size = second.usage.input_tokens + second.usage.output_tokens
		expect(size).toBeGreaterThan(400)
		const next = { model: MODEL, max_tokens: 20, messages: [{ role: 'user' as const, content: 'ok' }], thread: { type: 'continue' as const, previous_message_id: second.id }, betas: [BETA] }
		await limitRoom(a.tokenId, 200 * TOKEN)
		expect((await failure(a.anthropic.beta.messages.create(next)))!.status).toBe(402)
		await limitRoom(a.tokenId, (size + 50) * TOKEN)
		expect((await a.anthropic.beta.messages.create(next)).usage.input_tokens).toBe(size + 1)
	})

	it("should answer another account's continue of a thread with thread_not_found, before any upstream call or charge", async () => {
		const a = await client()
		const b = await client()
		const first = await a.anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'a private thread' }], thread: { type: 'create' }, betas: [BETA] })
		const calls = mock.requests.length
		const err = await failure(b.anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'what did they say?' }], thread: { type: 'continue', previous_message_id: first.id }, betas: [BETA] }))
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
		expect(err!.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', details: { error_code: 'thread_not_found' } } })
		expect(mock.requests.length).toBe(calls)
		expect(await spentOf(b.tokenId)).toBe(0)
		// The owner continues it.
		const own = await a.anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'and then?' }], thread: { type: 'continue', previous_message_id: first.id }, betas: [BETA] })
		expect(own.usage.input_tokens).toBe(first.usage.input_tokens + first.usage.output_tokens + 2)
	})

	it('should send a continue to the channel keeping its thread, not to another channel of the model', async () => {
		const second = await startAnthropicMock({ apiKey: 'up-an2' })
		const two = await startTestApp({
			config: {
				channels: [
					{ name: 'claude-a', type: 'anthropic', base_url: mock.url, api_key: 'up-an', models: [MODEL], priority: 0 },
					{ name: 'claude-b', type: 'anthropic', base_url: second.url, api_key: 'up-an2', models: [MODEL], priority: 1 },
				],
				models: [{ name: MODEL, input_per_mtok: 1000, output_per_mtok: 1000 }],
			},
		})
		try {
			const a = await two.account(100)
			const anthropic = new Anthropic({ apiKey: a.key, baseURL: two.url, maxRetries: 0 })
			// The first channel fails once: the thread is created on the second, which alone keeps it.
			mock.faultOnce = { kind: 'status', status: 529 }
			const first = await anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'kept by b' }], thread: { type: 'create' }, betas: [BETA] })
			const [aCalls, bCalls] = [mock.requests.length, second.requests.length]
			const next = await anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'and then?' }], thread: { type: 'continue', previous_message_id: first.id }, betas: [BETA] })
			expect(next.usage.input_tokens).toBe(first.usage.input_tokens + first.usage.output_tokens + 2)
			expect([mock.requests.length - aCalls, second.requests.length - bCalls]).toEqual([0, 1])
		} finally {
			await two.close()
			await second.stop()
		}
	})

	it('should forget recorded threads after a day, after which a continue is thread_not_found', async () => {
		const a = await client()
		const first = await a.anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'short lived' }], thread: { type: 'create' }, betas: [BETA] })
		expect(await purgeMessageThreads(app.svc)).toBe(0)
		expect(await purgeMessageThreads(app.svc, THREAD_RECORD_HOURS, Date.now() + (THREAD_RECORD_HOURS + 1) * 3_600_000)).toBeGreaterThan(0)
		const err = await failure(a.anthropic.beta.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'still there?' }], thread: { type: 'continue', previous_message_id: first.id }, betas: [BETA] }))
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
	})
})
