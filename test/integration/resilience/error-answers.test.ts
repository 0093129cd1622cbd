/**
 * Upstream failures that do not look like one, through the official SDKs: an OpenAI-compatible vendor (or a proxy)
 * that answers HTTP 200 with only `{"error": {…}}`, or streams only `data: [DONE]`, is failed over to the next channel
 * and never charged, on the same-protocol paths as on the converted ones; and a vendor's 404 for the name a channel's `model_map` sends it names
 * the model as the caller asked for it, not the operator's upstream name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { micros, usageOf } from '../surface/helpers'

const ERROR_ONLY = { error: { message: 'vendor internal error', type: 'server_error', param: null, code: null } }

let app: TestApp
let healthy: VendorMock
let an: VendorMock
/** An OpenAI-compatible vendor answering every call 200 with an error body alone. */
let broken: ReturnType<typeof Bun.serve>
let brokenCalls = 0
/** One whose streams are OpenAI's terminator alone: no chunk, no finish_reason. */
let doneOnly: ReturnType<typeof Bun.serve>
let doneOnlyCalls = 0

beforeAll(async () => {
	healthy = await startOpenAIMock({ apiKey: 'up-ok', models: ['gpt-4o-mini', 'text-embedding-3-small'] })
	an = await startAnthropicMock({ apiKey: 'up-an', models: ['claude-sonnet-4-5'] })
	broken = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch() {
			brokenCalls++
			return Response.json(ERROR_ONLY)
		},
	})
	doneOnly = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch() {
			doneOnlyCalls++
			return new Response('data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } })
		},
	})
	const both = (name: string, upstream: string, bad = broken) => [
		{ name: `${name}-broken`, type: 'openai' as const, base_url: `http://127.0.0.1:${bad.port}/v1`, api_key: 'up-broken', models: [name], model_map: { [name]: upstream } },
		{ name: `${name}-ok`, type: 'openai' as const, base_url: healthy.url, api_key: 'up-ok', models: [name], model_map: { [name]: upstream }, priority: 1 },
	]
	app = await startTestApp({
		config: {
			channels: [
				...both('e-chat', 'gpt-4o-mini'),
				...both('e-embed', 'text-embedding-3-small'),
				...both('e-done-oa', 'gpt-4o-mini', doneOnly),
				...both('e-done-an', 'gpt-4o-mini', doneOnly),
				{ name: 'alias-oa', type: 'openai', base_url: healthy.url, api_key: 'up-ok', models: ['my-alias'], model_map: { 'my-alias': 'secret-upstream-model-x' } },
				{ name: 'alias-an', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['my-claude'], model_map: { 'my-claude': 'claude-secret-upstream-y' } },
			],
			models: ['e-chat', 'e-embed', 'e-done-oa', 'e-done-an', 'my-alias', 'my-claude'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await healthy.stop()
	await an.stop()
	broken.stop(true)
	doneOnly.stop(true)
})

describe('a 200 answer that is only an error', () => {
	const cases: Array<[string, (openai: OpenAI) => Promise<unknown>, (r: any) => void]> = [
		['chat completions', (o) => o.chat.completions.create({ model: 'e-chat', messages: [{ role: 'user', content: 'hi there' }] }), (r) => expect(r.choices[0].message.content).toBe('Hello! You said: hi there')],
		['responses', (o) => o.responses.create({ model: 'e-chat', input: 'hi there' }), (r) => expect(r.output_text).toBe('Hello! You said: hi there')],
		['embeddings', (o) => o.embeddings.create({ model: 'e-embed', input: 'hi there' }), (r) => expect(r.data).toHaveLength(1)],
	]
	for (const [what, ask, check] of cases)
		it(`should fail over to the next channel and charge once (${what})`, async () => {
			const { key, accountId } = await app.account(1)
			const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
			const before = brokenCalls
			check(await ask(openai))
			expect(brokenCalls).toBe(before + 1)
			const rows = await usageOf(app, accountId)
			expect(rows).toHaveLength(1)
			expect(rows[0]).toMatchObject({ status: 200, end_reason: 'ok' })
			expect(micros(1 - (await app.balance(accountId)))).toBe(micros(rows[0]!.cost))
			expect(micros(rows[0]!.cost)).toBeGreaterThan(0)
		})

	it('should answer an error, never a 200 without choices, when no channel answers', async () => {
		// The broken vendor alone, through a model only it serves: the caller reads a 502 in its shape.
		const lone = await startTestApp({
			config: {
				channels: [{ name: 'lone', type: 'openai', base_url: `http://127.0.0.1:${broken.port}/v1`, api_key: 'up-broken', models: ['lone'] }],
				models: [{ name: 'lone', input_per_mtok: 1, output_per_mtok: 2 }],
			},
		})
		try {
			const acct = await lone.account(1)
			const err = await new OpenAI({ apiKey: acct.key, baseURL: `${lone.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'lone', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.APIError)
			expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
			expect(await lone.balance(acct.accountId)).toBe(1)
			expect((await usageOf(lone, acct.accountId)).map((r) => micros(r.cost))).toEqual([0])
		} finally {
			await lone.close()
		}
	})
})

describe('a stream of `data: [DONE]` alone', () => {
	it('should fail over for an OpenAI client (the same protocol, relayed as it comes)', async () => {
		const { key, accountId } = await app.account(1)
		const before = doneOnlyCalls
		let text = ''
		for await (const c of await new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'e-done-oa', messages: [{ role: 'user', content: 'hello there' }], stream: true }))
			text += c.choices[0]?.delta?.content ?? ''
		expect(text).toBe('Hello! You said: hello there')
		expect(doneOnlyCalls).toBe(before + 1)
		const rows = await usageOf(app, accountId)
		expect(rows.map((r) => [r.status, r.end_reason])).toEqual([[200, 'ok']])
	})

	it('should fail over for an Anthropic client (converted), not make up an end_turn', async () => {
		const { key, accountId } = await app.account(1)
		const before = doneOnlyCalls
		const msg = await new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 }).messages.stream({ model: 'e-done-an', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }).finalMessage()
		expect(msg.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello! You said: hello there'])
		expect(doneOnlyCalls).toBe(before + 1)
		const rows = await usageOf(app, accountId)
		expect(rows.map((r) => [r.status, r.end_reason])).toEqual([[200, 'ok']])
	})
})

describe("a vendor's 404 for a model_map name", () => {
	it('should name the model as the OpenAI client asked for it', async () => {
		const { key } = await app.account(1)
		const err = await new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'my-alias', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.NotFoundError)
		const message = (err as InstanceType<typeof OpenAI.NotFoundError>).message
		expect(message).toContain('my-alias')
		expect(message).not.toContain('secret-upstream-model-x')
	})

	it('should name the model as the Anthropic client asked for it', async () => {
		const { key } = await app.account(1)
		const err = await new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 }).messages.create({ model: 'my-claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
		const message = (err as InstanceType<typeof Anthropic.NotFoundError>).message
		expect(message).toContain('my-claude')
		expect(message).not.toContain('claude-secret-upstream-y')
	})
})
