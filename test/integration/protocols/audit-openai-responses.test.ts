/**
 * The Responses API as an `openai` SDK user sees it with Claude and Gemini models, against the reference
 * (https://platform.openai.com/docs/api-reference/responses/create and /responses/object): sampling settings out of
 * OpenAI's ranges are a 400 naming the field, as they are on chat completions, rather than reaching the vendor (Claude
 * clamps a temperature of 9 to 1, Gemini refuses it in its own words); and the `store` a Response object carries says
 * whether the gateway kept it, so a stored answer that `GET /v1/responses/{id}` returns does not claim `store: false`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { label, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Up = 'anthropic' | 'gemini'
/** `store` as the Response object carries it (the SDK's type leaves it out; the API sends it). */
const storeOf = (r: object) => (r as { store?: boolean }).store

const BOTH: Array<[Up, boolean]> = (['anthropic', 'gemini'] as Up[]).flatMap((u) => [[u, false] as [Up, boolean], [u, true] as [Up, boolean]])

describe('sampling settings out of range', () => {
	for (const [up, stream] of BOTH)
		it(`should answer 400 naming the field and call no vendor (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			for (const [param, body] of [
				['temperature', { temperature: 9 }],
				['temperature', { temperature: -1 }],
				['top_p', { top_p: 1.5 }],
				['top_logprobs', { top_logprobs: 21 }],
			] as const) {
				const err = await acct.openai.responses.create({ model: MODEL[up], input: 'hi', stream, ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e: unknown) => e)
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				const e = err as InstanceType<typeof OpenAI.BadRequestError>
				expect([e.status, e.type, e.param]).toEqual([400, 'invalid_request_error', param])
			}
			expect(m.mocks[up].requests.length).toBe(before)
		})

	it('should still send settings within the ranges', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.gemini, input: 'hi', temperature: 2, top_p: 0 })
		expect(r.status).toBe('completed')
		expect([r.temperature, r.top_p]).toEqual([2, 0])
	})
})

describe('store', () => {
	for (const [up, stream] of BOTH) {
		it(`should say store: true on an answer it keeps, as OpenAI does by default, and return that from GET (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const r = stream ? await acct.openai.responses.stream({ model: MODEL[up], input: 'keep this' }).finalResponse() : await acct.openai.responses.create({ model: MODEL[up], input: 'keep this' })
			expect(storeOf(r)).toBe(true)
			const got = await acct.openai.responses.retrieve(r.id)
			expect(storeOf(got)).toBe(true)
			expect(got.output_text).toBe('Hello! You said: keep this')
		})

		it(`should say store: false on an answer sent with store: false, which GET does not find (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], input: 'forget this', store: false }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			expect(storeOf(r)).toBe(false)
			expect(await acct.openai.responses.retrieve(r.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError)
		})
	}

	it('should say store: true on every lifecycle event of a kept stream', async () => {
		const acct = await m.account()
		const s = acct.openai.responses.stream({ model: MODEL.anthropic, input: 'keep this stream' })
		const stores: Array<[string, boolean | undefined]> = []
		s.on('event', (e) => {
			if ('response' in e) stores.push([e.type, storeOf(e.response)])
		})
		await s.finalResponse()
		expect(stores).toEqual([
			['response.created', true],
			['response.in_progress', true],
			['response.completed', true],
		])
	})
})
