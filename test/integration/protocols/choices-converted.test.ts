/**
 * Several choices across protocols, through the official SDKs (the Vercel AI SDK has no way to ask for several):
 * - OpenAI `n` for a Gemini model: one call with `generationConfig.candidateCount`, each candidate a choice, billed
 *   from Gemini's usage (the prompt once);
 * - OpenAI `n` for a Claude model: n calls at once, merged into choices 0…n-1 with the usage summed, the prompt
 *   included (it was paid n times), streamed with one usage chunk and one `[DONE]`; one failed call fails the request,
 *   and what the answered calls used is billed, no more;
 * - Gemini `candidateCount` for an OpenAI model (`n`) and for a Claude model (n calls);
 * - the reservation covers every prompt paid, so a small balance is not overspent;
 * - at most 8 answers from a vendor asked once per answer (a 400 before any call, or the next channel that takes `n`),
 *   and Gemini's `candidateCount` bounded at 1…8 as Gemini bounds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	// A model whose first channel is asked once per answer (Anthropic) and whose next takes `n` (OpenAI).
	m = await startMatrix({
		channels: (mocks) => [
			{ name: 'mix-anthropic', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [MIXED], model_map: { [MIXED]: 'claude-sonnet-4-6' }, priority: 0 },
			{ name: 'mix-openai', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [MIXED], model_map: { [MIXED]: 'gpt-4o-mini' }, priority: 1 },
		],
		models: [{ name: MIXED, input_per_mtok: 1, output_per_mtok: 1 }],
	})
}, SETUP_MS)
const MIXED = 'mix-m'
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
/** The mocks' answer to a prompt. */
const answer = (text: string) => `Hello! You said: ${text}`
const say = (text: string) => [{ role: 'user' as const, content: text }]

/** A Gemini SDK call's refusal: its status and Gemini's error body. */
async function refused(call: Promise<unknown>) {
	const e = await call.catch((x: unknown) => x)
	expect(e).toBeInstanceOf(ApiError)
	return { status: (e as ApiError).status, error: JSON.parse((e as ApiError).message).error as { code: number; message: string; status: string } }
}

/** How many calls each mock has had. */
const callsMade = () => ({ openai: m.mocks.openai.requests.length, anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length })

/** Every reservation of the account was settled or released: nothing is left in use on its leases. */
function expectNothingHeld(acct: Account) {
	const held = m.app.svc.ledger.leases().filter((l) => l.accountId === acct.accountId)
	expect(held.reduce((n, l) => n + l.inUse, 0)).toBe(0)
}

/** A chat completions stream read raw: its JSON chunks and how many `[DONE]` frames it had. */
async function rawStream(acct: Account, body: Record<string, unknown>) {
	const res = await fetch(`${m.app.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ ...body, stream: true }),
	})
	expect(res.status).toBe(200)
	const data = (await res.text())
		.split('\n')
		.filter((l) => l.startsWith('data: '))
		.map((l) => l.slice(6))
	const chunks = data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as OpenAI.Chat.Completions.ChatCompletionChunk)
	return { chunks, dones: data.filter((d) => d === '[DONE]').length }
}

/** The text and finish reason of each choice of a chunk stream, by index. */
function byChoice(chunks: OpenAI.Chat.Completions.ChatCompletionChunk[], n: number) {
	const text = Array.from({ length: n }, () => '')
	const finish = Array.from({ length: n }, () => null as string | null)
	for (const c of chunks)
		for (const ch of c.choices) {
			text[ch.index] += ch.delta.content ?? ''
			if (ch.finish_reason) finish[ch.index] = ch.finish_reason
		}
	return { text, finish }
}

describe('OpenAI n for a Gemini model', () => {
	it('should ask Gemini for n candidates in one call and give each as a choice, billed once for the prompt', async () => {
		const acct = await m.account()
		const before = m.mocks.gemini.requests.length
		const prompt = 'three from gemini'
		const r = await acct.openai.chat.completions.create({ model: MODEL.gemini, n: 3, messages: say(prompt) })
		expect(m.mocks.gemini.requests.length).toBe(before + 1)
		expect(lastRequest(m.mocks.gemini).body.generationConfig.candidateCount).toBe(3)
		expect(r.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
			[0, answer(prompt), 'stop'],
			[1, answer(prompt), 'stop'],
			[2, answer(prompt), 'stop'],
		])
		const each = countWords(answer(prompt))
		expect(r.usage).toMatchObject({ prompt_tokens: countWords(prompt), completion_tokens: 3 * each })
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: countWords(prompt), output: 3 * each }])
		expectNothingHeld(acct)
	})

	it('should stream each candidate as its choice, with one usage chunk and one [DONE]', async () => {
		const acct = await m.account()
		const prompt = 'two streamed from gemini'
		const { chunks, dones } = await rawStream(acct, { model: MODEL.gemini, n: 2, messages: say(prompt), stream_options: { include_usage: true } })
		expect(lastRequest(m.mocks.gemini).body.generationConfig.candidateCount).toBe(2)
		expect(dones).toBe(1)
		const { text, finish } = byChoice(chunks, 2)
		expect(text).toEqual([answer(prompt), answer(prompt)])
		expect(finish).toEqual(['stop', 'stop'])
		expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
		const usage = chunks.filter((c) => c.usage)
		expect(usage).toHaveLength(1)
		expect(usage[0]!.choices).toEqual([])
		const each = countWords(answer(prompt))
		expect(usage[0]!.usage).toMatchObject({ prompt_tokens: countWords(prompt), completion_tokens: 2 * each })
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: countWords(prompt), output: 2 * each, stream: true }])
	})
})

describe('OpenAI n for a Claude model (one call per choice)', () => {
	it('should make n calls and merge them into choices 0…n-1, usage summed with the prompt paid n times', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const prompt = 'three from claude'
		const r = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 3, messages: say(prompt) })
		const sent = m.mocks.anthropic.requests.slice(before)
		expect(sent).toHaveLength(3)
		for (const s of sent) expect((s.body as Record<string, unknown>).n).toBeUndefined()
		expect(r.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
			[0, answer(prompt), 'stop'],
			[1, answer(prompt), 'stop'],
			[2, answer(prompt), 'stop'],
		])
		const each = countWords(answer(prompt))
		expect(r.usage).toMatchObject({ prompt_tokens: 3 * countWords(prompt), completion_tokens: 3 * each })
		const [row] = await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 3 * countWords(prompt), output: 3 * each }])
		expect(row!.status).toBe(200)
		expectNothingHeld(acct)
	})

	it('should interleave the n streams, each chunk with its index, then one usage chunk and one [DONE]', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const prompt = 'two streamed from claude'
		const { chunks, dones } = await rawStream(acct, { model: MODEL.anthropic, n: 2, messages: say(prompt), stream_options: { include_usage: true } })
		expect(m.mocks.anthropic.requests.length).toBe(before + 2)
		expect(dones).toBe(1)
		const { text, finish } = byChoice(chunks, 2)
		expect(text).toEqual([answer(prompt), answer(prompt)])
		expect(finish).toEqual(['stop', 'stop'])
		expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
		// Each choice opens with its role, once.
		for (const i of [0, 1]) expect(chunks.filter((c) => c.choices.some((ch) => ch.index === i && ch.delta.role === 'assistant'))).toHaveLength(1)
		const usage = chunks.filter((c) => c.usage)
		expect(usage).toHaveLength(1)
		expect(chunks.at(-1)!.usage).toBeTruthy()
		const each = countWords(answer(prompt))
		expect(usage[0]!.usage).toMatchObject({ prompt_tokens: 2 * countWords(prompt), completion_tokens: 2 * each })
		await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 2 * countWords(prompt), output: 2 * each, stream: true }])
	})

	it('should stream through the OpenAI SDK without usage when it was not asked for', async () => {
		const acct = await m.account()
		const prompt = 'sdk streamed from claude'
		const stream = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 3, stream: true, messages: say(prompt) })
		const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
		for await (const c of stream) chunks.push(c)
		expect(chunks.some((c) => 'usage' in c && c.usage)).toBe(false)
		const { text, finish } = byChoice(chunks, 3)
		expect(text).toEqual([answer(prompt), answer(prompt), answer(prompt)])
		expect(finish).toEqual(['stop', 'stop', 'stop'])
		await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 3 * countWords(prompt), output: 3 * countWords(answer(prompt)), stream: true }])
	})

	it('should fail the whole request when one call fails, billing only what the answered calls used', async () => {
		const acct = await m.account()
		const prompt = 'one of three fails'
		m.mocks.anthropic.faultOnce = { kind: 'status', status: 529 }
		const err = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 3, messages: say(prompt) }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503)
		// The two calls that were answered were charged by the vendor: they are billed, the failed one is not.
		const [row] = await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 2 * countWords(prompt), output: 2 * countWords(answer(prompt)), endReason: 'error' }])
		expect(row!.status).toBe(503)
		expectNothingHeld(acct)
	})

	it('should charge nothing when every call fails', async () => {
		const acct = await m.account()
		m.mocks.anthropic.fault = { kind: 'status', status: 400 }
		try {
			const err = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 2, messages: say('all fail') }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		} finally {
			m.mocks.anthropic.fault = undefined
		}
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.status, r.cost, r.input_tokens])).toEqual([[400, 0, 0]])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		expectNothingHeld(acct)
	})

	it('should end the stream with an error when one stream fails mid-way, billing what the calls used', async () => {
		const acct = await m.account()
		const prompt = 'one stream breaks'
		m.mocks.anthropic.faultOnce = { kind: 'midstream', afterChunks: 5 }
		const stream = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 2, stream: true, messages: say(prompt) })
		const err = await (async () => {
			for await (const _ of stream);
		})().catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Error)
		const rows = await usageRows(m, acct.accountId)
		expect(rows).toHaveLength(1)
		const row = rows[0]!
		expect(row.end_reason).toBe('error')
		// Both calls were under way (each reported its prompt before the relay started): both prompts are billed.
		expect(row.input_tokens).toBe(2 * countWords(prompt))
		expect(row.output_tokens).toBeLessThanOrEqual(2 * countWords(answer(prompt)))
		expect(Math.round((acct.balance - (await m.app.balance(acct.accountId))) * 1e6)).toBe(Math.round(row.cost * 1e6))
		expectNothingHeld(acct)
	})

	it('should end the stream with an error when one call’s connection is reset mid-way, billing what was produced', async () => {
		const acct = await m.account()
		const prompt = 'one connection resets'
		m.mocks.anthropic.faultOnce = { kind: 'cut', afterChunks: 5, abrupt: true }
		const stream = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 2, stream: true, messages: say(prompt) })
		const err = await (async () => {
			for await (const _ of stream);
		})().catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Error)
		const rows = await usageRows(m, acct.accountId)
		expect(rows).toHaveLength(1)
		// The reset call ended without its terminator: the request is recorded as cut, as a single stream would be.
		expect(rows[0]!.end_reason).toBe('upstream_cut')
		expect(rows[0]!.input_tokens).toBe(2 * countWords(prompt))
		expect(Math.round((acct.balance - (await m.app.balance(acct.accountId))) * 1e6)).toBe(Math.round(rows[0]!.cost * 1e6))
		expectNothingHeld(acct)
	})

	it('should reserve every prompt paid, lowering the cap so that n prompts and n answers fit the balance', async () => {
		// $0.05 at $3 / $15 per million: 50,000 micro-USD. A prompt of ~600 tokens paid 4 times is 7,200 of them.
		const acct = await m.account(0.05)
		const prompt = Array.from({ length: 600 }, (_, i) => `w${i % 10}`).join(' ')
		await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 4, max_tokens: 5000, messages: say(prompt) })
		const cap = lastRequest(m.mocks.anthropic).body.max_tokens as number
		expect(cap).toBeLessThan(5000)
		expect(4 * cap * 15 + 4 * countWords(prompt) * 3).toBeLessThanOrEqual(50_000)
		const [row] = await usageRows(m, acct.accountId)
		expect(row!.input_tokens).toBe(4 * countWords(prompt))
		expect(row!.cost).toBeLessThanOrEqual(0.05)
	})
})

describe('the most answers from a vendor asked once per answer', () => {
	it('should refuse n above 8 for a Claude model before any call, whole and streamed', async () => {
		const acct = await m.account()
		const before = callsMade()
		for (const n of [9, 128]) {
			const whole = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n, messages: say('too many') }).catch((e: unknown) => e)
			const streamed = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n, stream: true, messages: say('too many') }).catch((e: unknown) => e)
			for (const err of [whole, streamed]) {
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n')
				expect((err as Error).message).toContain(`model "${MODEL.anthropic}" gives at most 8 answers per request (n is ${n})`)
			}
		}
		expect(callsMade()).toEqual(before)
		expect(await usageRows(m, acct.accountId)).toHaveLength(0)
		expectNothingHeld(acct)
	})

	it("should refuse n above 8 for a Gemini model (its candidateCount's most) naming n, before any call", async () => {
		const acct = await m.account()
		const before = callsMade()
		for (const stream of [false, true]) {
			const err = await acct.openai.chat.completions.create({ model: MODEL.gemini, n: 9, stream, messages: say('too many') }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n')
			expect((err as Error).message).toContain(`model "${MODEL.gemini}" gives at most 8 answers per request (n is 9)`)
		}
		expect(callsMade()).toEqual(before)
		expect(await usageRows(m, acct.accountId)).toHaveLength(0)
		const eight = await acct.openai.chat.completions.create({ model: MODEL.gemini, n: 8, messages: say('eight') })
		expect(eight.choices).toHaveLength(8)
	})

	it('should give 8 answers from 8 Claude calls', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const r = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 8, messages: say('eight of them') })
		expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
		expect(m.mocks.anthropic.requests.length).toBe(before + 8)
	})

	it('should still ask an OpenAI channel for n above 8 in one call', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: MODEL.openai, n: 20, messages: say('twenty') })
		expect(r.choices).toHaveLength(20)
		expect(lastRequest(m.mocks.openai).body.n).toBe(20)
	})

	it('should pass over a channel asked once per answer to the next one taking n', async () => {
		const acct = await m.account()
		const before = callsMade()
		const r = await acct.openai.chat.completions.create({ model: MIXED, n: 12, messages: say('twelve') })
		expect(r.choices).toHaveLength(12)
		expect(callsMade()).toEqual({ ...before, openai: before.openai + 1 })
		expect(lastRequest(m.mocks.openai).body.n).toBe(12)
	})

	it('should refuse candidateCount above 8 or below 1 in Gemini’s words before any call', async () => {
		const acct = await m.account()
		const before = callsMade()
		for (const model of [MODEL.openai, MODEL.anthropic, MODEL.gemini])
			for (const candidateCount of [9, 500, 0]) {
				const { status, error } = await refused(genai(acct).models.generateContent({ model, contents: 'too many', config: { candidateCount } }))
				expect(status).toBe(400)
				expect(error.status).toBe('INVALID_ARGUMENT')
				expect(error.message).toContain('generationConfig.candidateCount')
			}
		expect(callsMade()).toEqual(before)
		expect(await usageRows(m, acct.accountId)).toHaveLength(0)
	})
})

describe('Gemini candidateCount for other vendors', () => {
	it('should ask an OpenAI channel for n and give each choice as a candidate', async () => {
		const acct = await m.account()
		const prompt = 'two on openai'
		const r = await genai(acct).models.generateContent({ model: MODEL.openai, contents: prompt, config: { candidateCount: 2 } })
		expect(lastRequest(m.mocks.openai).body.n).toBe(2)
		expect(r.candidates?.map((c) => [c.index, c.content?.parts?.[0]?.text, c.finishReason])).toEqual([
			[0, answer(prompt), 'STOP'],
			[1, answer(prompt), 'STOP'],
		])
		const each = countWords(answer(prompt))
		expect(r.usageMetadata).toMatchObject({ promptTokenCount: countWords(prompt), candidatesTokenCount: 2 * each })
		await expectCharges(m, acct, [{ model: MODEL.openai, input: countWords(prompt), output: 2 * each }])
	})

	it('should stream an OpenAI channel’s choices as candidates', async () => {
		const acct = await m.account()
		const prompt = 'two streamed on openai'
		const text = ['', '']
		let last: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined
		for await (const c of await genai(acct).models.generateContentStream({ model: MODEL.openai, contents: prompt, config: { candidateCount: 2 } })) {
			for (const k of c.candidates ?? []) text[k.index ?? 0] += (k.content?.parts ?? []).map((p) => p.text ?? '').join('')
			if (c.usageMetadata) last = c.usageMetadata
		}
		expect(lastRequest(m.mocks.openai).body.n).toBe(2)
		expect(text).toEqual([answer(prompt), answer(prompt)])
		const each = countWords(answer(prompt))
		expect(last).toMatchObject({ promptTokenCount: countWords(prompt), candidatesTokenCount: 2 * each })
		await expectCharges(m, acct, [{ model: MODEL.openai, input: countWords(prompt), output: 2 * each, stream: true }])
	})

	it('should make one Claude call per candidate, whole and streamed', async () => {
		for (const stream of [false, true]) {
			const acct = await m.account()
			const before = m.mocks.anthropic.requests.length
			const prompt = `two on claude ${stream ? 'streamed' : 'whole'}`
			const text = ['', '']
			const finish: string[] = []
			let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined
			const chunks = stream
				? await genai(acct).models.generateContentStream({ model: MODEL.anthropic, contents: prompt, config: { candidateCount: 2 } })
				: [await genai(acct).models.generateContent({ model: MODEL.anthropic, contents: prompt, config: { candidateCount: 2 } })]
			for await (const c of chunks) {
				for (const k of c.candidates ?? []) {
					text[k.index ?? 0] += (k.content?.parts ?? []).map((p) => p.text ?? '').join('')
					if (k.finishReason) finish[k.index ?? 0] = k.finishReason
				}
				if (c.usageMetadata) usage = c.usageMetadata
			}
			expect(m.mocks.anthropic.requests.length).toBe(before + 2)
			expect(text).toEqual([answer(prompt), answer(prompt)])
			expect(finish).toEqual(['STOP', 'STOP'])
			const each = countWords(answer(prompt))
			expect(usage).toMatchObject({ promptTokenCount: 2 * countWords(prompt), candidatesTokenCount: 2 * each })
			await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 2 * countWords(prompt), output: 2 * each, stream }])
		}
	})
})
