/**
 * A model_map alias is what the client sees, whichever path served it: OpenAI's `model` on the answer and every chunk,
 * Anthropic's `model` on the message, Gemini's `modelVersion` on the answer and every chunk. The converted path names
 * the model as the client asked; the fast path rewrites the vendor's bytes to match (a mapped name often hides which
 * model or vendor serves it). Gemini's fast path showed the upstream's `gemini-2.5-flash`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS, UPSTREAM_MODEL } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

/** The model names one call showed its client: the answer's, or every chunk's. */
const SEEN = {
	async openai(acct: Account, model: string, stream: boolean): Promise<string[]> {
		if (!stream) return [(await acct.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'who' }] })).model]
		const out: string[] = []
		for await (const c of await acct.openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'who' }] })) out.push(c.model)
		return out
	},
	async anthropic(acct: Account, model: string, stream: boolean): Promise<string[]> {
		const params = { model, max_tokens: 50, messages: [{ role: 'user' as const, content: 'who' }] }
		return [(stream ? await acct.anthropic.messages.stream(params).finalMessage() : await acct.anthropic.messages.create(params)).model]
	},
	async gemini(acct: Account, model: string, stream: boolean): Promise<string[]> {
		if (!stream) return [(await genai(acct).models.generateContent({ model, contents: 'who' })).modelVersion ?? '']
		const out: string[] = []
		for await (const c of await genai(acct).models.generateContentStream({ model, contents: 'who' })) out.push(c.modelVersion ?? '')
		return out
	},
}

describe('a model_map alias', () => {
	for (const client of ['openai', 'anthropic', 'gemini'] as const)
		for (const up of UPSTREAMS)
			for (const stream of [false, true])
				it(`should be the model a ${client} client sees from ${up} (${stream ? 'stream' : 'JSON'})`, async () => {
					const acct = await m.account()
					const seen = await SEEN[client](acct, MODEL[up], stream)
					expect(seen.length).toBeGreaterThan(0)
					expect(new Set(seen)).toEqual(new Set([MODEL[up]]))
					expect(seen.join()).not.toContain(UPSTREAM_MODEL[up])
				})
})
