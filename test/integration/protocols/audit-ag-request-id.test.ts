/**
 * Anthropic's request id as `@anthropic-ai/sdk` reads it: the `request-id` response header (`_request_id` on every
 * answer, `APIError.requestID`) and the `request_id` member of an error body
 * (https://docs.anthropic.com/en/api/errors#request-id). Claude Code and SDK users quote it when reporting a failure;
 * the gateway's own id (`x-request-id`, the usage row's key) is the one to give them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { label, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const ID = /^req_[A-Za-z0-9]{24}$/

describe('request-id for the Anthropic SDK', () => {
	for (const [up, stream] of PAIRS) {
		it(`should name the request on a message (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], max_tokens: 50, messages: [{ role: 'user' as const, content: 'hello id' }] }
			let id: string | null | undefined
			let headerId: string | null
			if (stream) {
				const { data, response, request_id } = await acct.anthropic.messages.create({ ...params, stream: true }).withResponse()
				const types: string[] = []
				for await (const ev of data) types.push(ev.type)
				expect(types.at(-1)).toBe('message_stop')
				;[id, headerId] = [request_id, response.headers.get('x-request-id')]
			} else {
				const { data, response, request_id } = await acct.anthropic.messages.create(params).withResponse()
				expect(data.type).toBe('message')
				;[id, headerId] = [request_id, response.headers.get('x-request-id')]
			}
			expect(id ?? '').toMatch(ID)
			expect(headerId).toBe(id!)
		})
	}

	it('should name the request on a token count', async () => {
		const acct = await m.account()
		for (const up of ['openai', 'gemini', 'anthropic'] as const) {
			const { data, request_id } = await acct.anthropic.messages.countTokens({ model: MODEL[up], messages: [{ role: 'user', content: 'count me' }] }).withResponse()
			expect(data.input_tokens).toBeGreaterThan(0)
			expect(request_id ?? '').toMatch(ID)
		}
	})

	const failures: Array<[string, (a: Anthropic) => Promise<unknown>, number]> = [
		['an unknown model', (a) => a.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }), 404],
		['an invalid body', (a) => a.messages.create({ model: MODEL.openai, max_tokens: 5, messages: [] }), 400],
		['a bad key', (a) => new Anthropic({ apiKey: 'sk-wrong', baseURL: a.baseURL, maxRetries: 0 }).messages.create({ model: MODEL.openai, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }), 401],
	]
	for (const [what, call, status] of failures)
		it(`should name the request in the error for ${what}, in the header and the body`, async () => {
			const acct = await m.account()
			const err = await call(acct.anthropic).then(
				() => undefined,
				(e: unknown) => e,
			)
			expect(err).toBeInstanceOf(Anthropic.APIError)
			const e = err as InstanceType<typeof Anthropic.APIError>
			expect(e.status).toBe(status)
			expect(e.requestID ?? '').toMatch(ID)
			expect((e.error as { request_id?: string }).request_id).toBe(e.requestID!)
		})

	it('should keep the id in the error body for an upstream failure', async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'status', status: 400 }
		const res = await fetch(`${m.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01', 'x-request-id': 'client-chosen-1' },
			body: JSON.stringify({ model: MODEL.openai, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
		})
		expect(res.status).toBe(400)
		expect(res.headers.get('request-id')).toBe('client-chosen-1')
		expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, request_id: 'client-chosen-1' })
	})
})
