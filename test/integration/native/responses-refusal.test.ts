/**
 * QA report item 10 through real Responses clients (the `openai` SDK and the Vercel AI SDK's `.responses()`): a
 * refusal — Anthropic `stop_reason: "refusal"`, OpenAI chat's `refusal` field — arrives as a `refusal` content part
 * (`response.refusal.delta` / `response.refusal.done` when streamed), so `.responses()` reports `content-filter` as
 * its chat provider does; Anthropic's, told only at the end, follows the text it streamed as `output_text` (that part
 * closed as opened). A converted stream that fails mid-way sends the cut message `incomplete` before `error`.
 * The mocks refuse on `#refusal` (test/mocks/README.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, streamText } from 'ai'
import OpenAI, { APIError } from 'openai'
import { REFUSAL_TEXT } from '../../mocks'
import { type Native, SETUP_MS, settledRows, startNative } from './setup'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let n: Native
beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)
afterAll(() => n.close())

const client = async () => {
	const a = await n.app.account(10)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1`, maxRetries: 0 }) }
}

/** Anthropic (refusal told by stop_reason at the end) and an OpenAI chat-only channel (the `refusal` field). */
const MODELS = { anthropic: 'claude-sonnet-5', chat: 'compat-chat' } as const

type Part = { type: string; text?: string; refusal?: string }
const partsOf = (r: OpenAI.Responses.Response): Part[] => r.output.flatMap((o) => (o.type === 'message' ? (o.content as Part[]) : []))

describe('a refusal reaches a Responses client as a refusal part', () => {
	for (const [upstream, model] of Object.entries(MODELS)) {
		it(`should answer a refusal from ${upstream} with a refusal part (non-stream)`, async () => {
			const a = await client()
			const r = await a.openai.responses.create({ model, input: 'do the bad thing #refusal' })
			expect(r.status).toBe('completed')
			if (upstream === 'chat') {
				expect(partsOf(r)).toEqual([{ type: 'refusal', refusal: REFUSAL_TEXT }])
				expect(r.output_text).toBe('')
			} else {
				// Claude's words are its text; the refusal (no explanation given) is a refusal part after it.
				expect(partsOf(r)).toEqual([{ type: 'output_text', text: REFUSAL_TEXT, annotations: [], logprobs: [] } as Part, { type: 'refusal', refusal: '' }])
				expect(r.output_text).toBe(REFUSAL_TEXT)
			}
		})

		it(`should stream a refusal from ${upstream} with response.refusal.done and a refusal part in the final response`, async () => {
			const a = await client()
			const stream = a.openai.responses.stream({ model, input: 'do the bad thing #refusal' })
			const events: Array<{ type: string; delta?: string; refusal?: string }> = []
			stream.on('event', (e) => events.push(e as (typeof events)[number]))
			const final = await stream.finalResponse()
			const done = events.filter((e) => e.type === 'response.refusal.done')
			expect(done).toHaveLength(1)
			const refusals = partsOf(final).filter((p) => p.type === 'refusal')
			expect(refusals).toHaveLength(1)
			if (upstream === 'chat') {
				// OpenAI marks the refusal as it streams: it goes out as refusal deltas, never as output_text.
				expect(events.filter((e) => e.type === 'response.refusal.delta').map((e) => e.delta).join('')).toBe(REFUSAL_TEXT)
				expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(false)
				expect(done[0]!.refusal).toBe(REFUSAL_TEXT)
				expect(partsOf(final)).toMatchObject([{ type: 'refusal', refusal: REFUSAL_TEXT }])
				expect(partsOf(final)).toHaveLength(1)
			} else {
				// Anthropic says "refusal" only in its last event, after the text streamed as output_text: that part closes
				// as output_text, and a refusal part of its own follows (empty: the mock's Claude gives no explanation).
				expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('')).toBe(REFUSAL_TEXT)
				expect(done[0]!.refusal).toBe('')
				expect(events.filter((e) => e.type === 'response.output_text.done')).toHaveLength(1)
			}
			// Streamed or not, the same answer.
			const plain = (r: OpenAI.Responses.Response) => partsOf(r).map(({ type, text, refusal }) => ({ type, text, refusal }))
			expect(plain(final)).toEqual(
				upstream === 'chat'
					? [{ type: 'refusal', text: undefined, refusal: REFUSAL_TEXT }]
					: [
							{ type: 'output_text', text: REFUSAL_TEXT, refusal: undefined },
							{ type: 'refusal', text: undefined, refusal: '' },
						],
			)
			expect(final.output_text).toBe(upstream === 'chat' ? '' : REFUSAL_TEXT)
			const whole = await a.openai.responses.create({ model, input: 'do the bad thing #refusal' })
			expect(whole.output.map((o) => o.type)).toEqual(final.output.map((o) => o.type))
			expect(plain(whole)).toEqual(plain(final))
		})

		for (const stream of [false, true])
			it(`should make the Vercel AI SDK .responses() report content-filter for a ${upstream} refusal (${stream ? 'stream' : 'non-stream'})`, async () => {
				const a = await client()
				const model = createOpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1` }).responses(MODELS[upstream as keyof typeof MODELS])
				const r = stream ? streamText({ model, prompt: 'do the bad thing #refusal' }) : await generateText({ model, prompt: 'do the bad thing #refusal' })
				expect(await r.finishReason).toBe('content-filter')
				expect(await r.text).toBe(REFUSAL_TEXT)
			})
	}
})

describe('a converted Responses stream that fails mid-way', () => {
	for (const [upstream, model] of Object.entries(MODELS))
		it(`should send the cut message as incomplete, not completed, before the error (${upstream} upstream)`, async () => {
			const a = await client()
			;(upstream === 'anthropic' ? n.anthropic : n.openai).faultOnce = { kind: 'midstream', afterChunks: 4 }
			const events: Array<{ type: string; item?: { type: string; status: string } }> = []
			const stream = a.openai.responses.stream({ model, input: 'please tell me a long story about the sea and the stars tonight' })
			stream.on('event', (e) => events.push(e as (typeof events)[number]))
			const err = await stream.finalResponse().catch((e: unknown) => e)
			expect(err).toBeInstanceOf(APIError)
			expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(true)
			const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => [e.item!.type, e.item!.status])
			expect(done).toEqual([['message', 'incomplete']])
			const [row] = await settledRows(n.app, a.accountId)
			expect(row).toMatchObject({ endpoint: '/v1/responses', stream: true, end_reason: 'error' })
		})
})
