/**
 * Billing audit: cache reads and cache writes priced apart, whatever protocol carries the request. An Anthropic
 * upstream reports writes (`cache_creation_input_tokens`) and reads (`cache_read_input_tokens`); each is charged at its
 * own price once, the same through the Responses API, Chat Completions, Messages and Gemini's generateContent, streamed
 * or not, and the usage row shows them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { countWords } from '../../mocks'
import { chat, messages } from './clients'
import { type Account, MODEL, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

/** claude-m: $3 input, $15 output, $0.30 cache reads, $3.75 cache writes per million tokens. */
const RATE = { input: 3, output: 15, read: 0.3, write: 3.75 }

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ models: [{ name: 'claude-m', cache_write_per_mtok: RATE.write }] })
}, SETUP_MS)
afterAll(() => m.close())

type Counts = { input: number; output: number; read: number; write: number }

/** Micro-USD, one exact sum and one half-up rounding, computed apart from the gateway's code. */
const cost = (c: Counts) => {
	const micro = (usd: number) => BigInt(Math.round(usd * 1e6))
	const num = BigInt(c.input) * micro(RATE.input) + BigInt(c.read) * micro(RATE.read) + BigInt(c.write) * micro(RATE.write) + BigInt(c.output) * micro(RATE.output)
	return Number((num * 2n + 1_000_000n) / 2_000_000n)
}

type Client = 'responses' | 'chat' | 'messages' | 'gemini'

/** One request through `client`; answers the output tokens the client was shown. */
async function ask(client: Client, acct: Account, text: string, stream: boolean): Promise<number> {
	if (client === 'chat') return (await chat(acct.openai, { model: MODEL.anthropic, messages: [{ role: 'user', content: text }] }, stream)).usage.output
	if (client === 'messages') return (await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 200, messages: [{ role: 'user', content: text }] }, stream)).usage.output
	if (client === 'responses') {
		if (!stream) return (await acct.openai.responses.create({ model: MODEL.anthropic, input: text })).usage!.output_tokens
		return (await acct.openai.responses.stream({ model: MODEL.anthropic, input: text }).finalResponse()).usage!.output_tokens
	}
	const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
	if (!stream) return (await ai.models.generateContent({ model: MODEL.anthropic, contents: text })).usageMetadata!.candidatesTokenCount!
	let out = 0
	for await (const c of await ai.models.generateContentStream({ model: MODEL.anthropic, contents: text })) out = c.usageMetadata?.candidatesTokenCount ?? out
	return out
}

describe('cache reads and writes of an Anthropic upstream, billed the same through every client', () => {
	for (const client of ['responses', 'chat', 'messages', 'gemini'] as Client[])
		for (const stream of [false, true])
			for (const [tag, kind] of [
				['#cache', 'read'],
				['#write-cache', 'write'],
			] as const)
				it(`should charge 10 cache ${kind}s at the cache ${kind} price once (${client}, ${stream ? 'stream' : 'non-stream'})`, async () => {
					const acct = await m.account()
					const text = `a long preamble worth keeping ${tag} for the next turns of this talk`
					const output = await ask(client, acct, text, stream)
					expect(output).toBe(countWords(`Hello! You said: ${text}`))
					const prompt = countWords(text)
					const counts: Counts = { input: prompt - 10, output, read: kind === 'read' ? 10 : 0, write: kind === 'write' ? 10 : 0 }
					const [row, ...rest] = await usageRows(m, acct.accountId)
					expect(rest).toHaveLength(0)
					expect(row).toMatchObject({ input_tokens: prompt, output_tokens: output, cached_tokens: counts.read, status: 200 })
					expect((row as unknown as { cache_write_tokens: number }).cache_write_tokens).toBe(counts.write)
					expect(Math.round(row!.cost * 1e6)).toBe(cost(counts))
					expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost(counts))
				})
})
