import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { call, micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let backup: VendorMock
let an: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	backup = await startOpenAIMock({ apiKey: 'up-oa' })
	an = await startAnthropicMock({ apiKey: 'up-an' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-3.5-turbo-instruct', 'instruct', 'local-nousage', 'gpt-4o', 'claude-or-instruct'], model_map: { instruct: 'gpt-3.5-turbo-instruct' }, priority: 1 },
				// First in line for the model both protocols serve: only the OpenAI-protocol channel may take a legacy completion.
				{ name: 'an-first', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['claude-or-instruct'], priority: 0 },
				{ name: 'backup', type: 'openai', base_url: backup.url, api_key: 'up-oa', models: ['gpt-3.5-turbo-instruct'], priority: 2 },
				{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['claude-sonnet-4-5'], priority: 2 },
			],
			models: [
				{ name: 'gpt-3.5-turbo-instruct', input_per_mtok: 1.5, output_per_mtok: 2 },
				{ name: 'instruct', input_per_mtok: 1.5, output_per_mtok: 2 },
				{ name: 'local-nousage', input_per_mtok: 1, output_per_mtok: 1 },
				{ name: 'gpt-4o', input_per_mtok: 2.5, output_per_mtok: 10 },
				{ name: 'claude-sonnet-4-5', input_per_mtok: 3, output_per_mtok: 15 },
				{ name: 'claude-or-instruct', input_per_mtok: 1, output_per_mtok: 1 },
			],
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await Promise.all([oa.stop(), backup.stop(), an.stop()])
})

const reset = () => {
	oa.reset()
	backup.reset()
	an.reset()
	oa.fault = undefined
	oa.faultOnce = undefined
}

describe('POST /v1/completions', () => {
	it('should forward the body untouched but the model and bill the usage the upstream reports', async () => {
		const { key, accountId } = await app.account(1)
		reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const c = await openai.completions.create({ model: 'instruct', prompt: 'Say this is a test', max_tokens: 5, echo: false, logit_bias: { '50256': -100 }, suffix: 'end', temperature: 0 })
		expect(c.object).toBe('text_completion')
		expect(c.model).toBe('instruct')
		expect(c.choices).toEqual([{ text: ' Completed: Say this is a', index: 0, logprobs: null, finish_reason: 'length' }])
		expect(c.usage).toEqual({ prompt_tokens: 6, completion_tokens: 5, total_tokens: 11 })
		expect(oa.requests[0]!.path).toBe('/v1/completions')
		expect(oa.requests[0]!.body).toEqual({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', max_tokens: 5, echo: false, logit_bias: { '50256': -100 }, suffix: 'end', temperature: 0 })
		expect(oa.requests[0]!.headers.authorization).toBe('Bearer up-oa')
		// 6 × $1.5/M + 5 × $2/M = 9 + 10 micro-USD
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 19)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'instruct', endpoint: '/v1/completions', input_tokens: 6, output_tokens: 5, status: 200, end_reason: 'ok', estimated: false })
	})

	it('should leave max_tokens to the upstream (the legacy default of 16) when the client sets none', async () => {
		const { key } = await app.account(1)
		reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const c = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: ['one', 'two'], n: 2 })
		expect(c.choices.map((x) => x.index)).toEqual([0, 1, 2, 3])
		expect(oa.requests[0]!.body).toEqual({ model: 'gpt-3.5-turbo-instruct', prompt: ['one', 'two'], n: 2 })
	})

	it('should stream the chunks as the upstream sent them, asking for usage and hiding it from a client that did not', async () => {
		const { key, accountId } = await app.account(1)
		reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const stream = await openai.completions.create({ model: 'instruct', prompt: 'write a haiku', max_tokens: 50, stream: true })
		let text = ''
		const chunks: OpenAI.Completion[] = []
		for await (const chunk of stream) {
			chunks.push(chunk)
			text += chunk.choices[0]?.text ?? ''
		}
		expect(text).toBe(' Completed: write a haiku')
		expect(chunks.every((c) => c.object === 'text_completion' && c.model === 'instruct' && !('usage' in c))).toBe(true)
		expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop')
		expect((oa.requests[0]!.body as { stream_options: unknown }).stream_options).toEqual({ include_usage: true })
		// 3 prompt words × $1.5/M + 4 answer words × $2/M = 4.5 + 8 micro-USD
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 13)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/completions', input_tokens: 3, output_tokens: 4, end_reason: 'ok', estimated: false })
	})

	it('should relay the usage chunk to a client that asked for it', async () => {
		const { key } = await app.account(1)
		reset()
		const res = await fetch(`${app.url}/v1/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi there', stream: true, stream_options: { include_usage: true } }),
		})
		expect(res.headers.get('content-type')).toContain('text/event-stream')
		const body = await res.text()
		expect(body.endsWith('data: [DONE]\n\n')).toBe(true)
		const frames = body.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)))
		expect(frames.at(-1)).toMatchObject({ object: 'text_completion', choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } })
		expect(frames.slice(0, -1).every((f) => f.usage === null)).toBe(true)
		expect(oa.requests[0]!.text).toBe(JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi there', stream: true, stream_options: { include_usage: true } }))
	})

	it('should estimate the charge, marked so, from an upstream that reports no usage', async () => {
		const { key, accountId } = await app.account(1)
		reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const c = await openai.completions.create({ model: 'local-nousage', prompt: 'hello world', max_tokens: 20 })
		expect(c.choices[0]!.text).toBe(' Completed: hello world')
		const stream = await openai.completions.create({ model: 'local-nousage', prompt: 'hello world', max_tokens: 20, stream: true })
		let text = ''
		for await (const chunk of stream) text += chunk.choices[0]?.text ?? ''
		expect(text).toBe(' Completed: hello world')
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(2)
		for (const row of rows) {
			expect(row).toMatchObject({ endpoint: '/v1/completions', input_tokens: 2, estimated: true, status: 200 })
			expect(row.output_tokens).toBeGreaterThan(0)
		}
		expect(await app.balance(accountId)).toBeLessThan(1)
	})

	it('should fail over to another channel before the first byte, charging once', async () => {
		const { key, accountId } = await app.account(1)
		reset()
		oa.faultOnce = { kind: 'status', status: 503 }
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const stream = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'again', stream: true })
		let text = ''
		for await (const chunk of stream) text += chunk.choices[0]?.text ?? ''
		expect(text).toBe(' Completed: again')
		expect(oa.requests).toHaveLength(1)
		expect(backup.requests).toHaveLength(1)
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ status: 200, input_tokens: 1, output_tokens: 2 })
	})

	it('should end a cut stream with an error frame and bill what was produced, estimated', async () => {
		const { key, accountId } = await app.account(1)
		reset()
		oa.faultOnce = { kind: 'cut', afterChunks: 3 }
		const res = await fetch(`${app.url}/v1/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'one two three four five', stream: true }),
		})
		const body = await res.text()
		expect(body).toContain(' Completed:')
		expect(body).toContain('"code":"upstream_cut"')
		expect(body).not.toContain('[DONE]')
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/completions', end_reason: 'upstream_cut', input_tokens: 5, estimated: true })
		expect(row!.output_tokens).toBeGreaterThan(0)
	})

	it('should count the key against its requests-per-minute limit', async () => {
		const { key, tokenId } = await app.account(1)
		reset()
		expect((await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { rpm_limit: 1 } })).status).toBe(200)
		expect((await call(app, key, '/v1/completions', { body: { model: 'gpt-3.5-turbo-instruct', prompt: 'one' } })).status).toBe(200)
		const limited = await call(app, key, '/v1/completions', { body: { model: 'gpt-3.5-turbo-instruct', prompt: 'two' } })
		expect(limited.status).toBe(429)
		expect(oa.requests).toHaveLength(1)
	})

	it("should relay the upstream's refusal of a chat-only model, uncharged", async () => {
		const { key, accountId } = await app.account(1)
		reset()
		const r = await call(app, key, '/v1/completions', { body: { model: 'gpt-4o', prompt: 'hi' } })
		expect(r.status).toBe(404)
		expect(r.body.error.message).toContain('not supported in the v1/completions endpoint')
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should answer 400 in OpenAI shape for a model served only through another protocol, calling no upstream', async () => {
		const { key, accountId } = await app.account(1)
		reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const err = await openai.completions.create({ model: 'claude-sonnet-4-5', prompt: 'hi', max_tokens: 5 }).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect(err.error).toMatchObject({ type: 'invalid_request_error', param: 'model' })
		expect(err.error.message).toContain('legacy completions API')
		expect(err.error.message).toContain('/v1/chat/completions')
		expect(an.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should use only the OpenAI-protocol channels of a model that others serve too', async () => {
		const { key } = await app.account(1)
		reset()
		const r = await call(app, key, '/v1/completions', { body: { model: 'claude-or-instruct', prompt: 'mixed' } })
		expect(r.status).toBe(200)
		expect(r.body.choices[0].text).toBe(' Completed: mixed')
		expect(an.requests).toHaveLength(0)
	})

	it("should hold the key to its allowed_models and refuse a balance that cannot cover the request", async () => {
		const { key, tokenId } = await app.account(1)
		reset()
		expect((await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { allowed_models: ['gpt-3.5-turbo-instruct'] } })).status).toBe(200)
		const denied = await call(app, key, '/v1/completions', { body: { model: 'instruct', prompt: 'hi' } })
		expect(denied.status).toBe(403)
		const poor = await app.account(0)
		const broke = await call(app, poor.key, '/v1/completions', { body: { model: 'gpt-3.5-turbo-instruct', prompt: 'hi' } })
		expect(broke.status).toBe(402)
		expect(oa.requests).toHaveLength(0)
	})

	it('should answer 400 for a request without a model or a prompt of the wrong type', async () => {
		const { key } = await app.account(1)
		const noModel = await call(app, key, '/v1/completions', { body: { prompt: 'hi' } })
		expect(noModel.status).toBe(400)
		const badPrompt = await call(app, key, '/v1/completions', { body: { model: 'gpt-3.5-turbo-instruct', prompt: { text: 'hi' } } })
		expect(badPrompt.status).toBe(400)
		expect(badPrompt.body.error.type).toBe('invalid_request_error')
	})
})
