/**
 * Prompt caching for OpenAI clients on a Bedrock model served over Converse (relay/auto-cache.ts): a chat-completions
 * or Responses request with `prompt_cache_key`, to a family that takes cache points (Amazon Nova), gets a `cachePoint`
 * after its last block and one where the previous turn's request had it, so an agent's next turn reads the replayed
 * conversation from the cache; the reads come back as `cached_tokens`, and reads and writes are billed at their prices.
 * `prompt_cache_retention: "24h"` is neither sent (Nova's cache points take no TTL) nor reserved at the 1-hour write
 * price. `settings.auto_cache: never`, a request with breakpoints of its own and a family without cache points get
 * nothing added. Claude behind an application inference profile goes over InvokeModel, its last block marked instead.
 * Through the official `openai` SDK against the Bedrock mock, which caches as Bedrock documents (no look-back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, countWords, startBedrockMock } from '../../mocks'
import { type Account, lastRequest, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

const REGION = 'us-east-1'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1hdXRvY2FjaGU='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const NOVA_ID = 'us.amazon.nova-lite-v1:0'
const LLAMA_ID = 'meta.llama3-3-70b-instruct-v1:0'
const PROFILE_ARN = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/ac1b2c3d4e5f'
const PROFILE_BASE = 'anthropic.claude-sonnet-4-5-20250929-v1:0'

const NOVA = 'ac-nova'
const NEVER = 'ac-nova-never'
const LLAMA = 'ac-llama'
const CLAUDE = 'ac-claude-profile'
// USD per million tokens: input, cache writes (5-minute and 1-hour), cache reads, output.
const P = { input: 1, write: 1.25, write1h: 50, read: 0.1, output: 2 }
const prices = { input_per_mtok: P.input, output_per_mtok: P.output, cache_read_per_mtok: P.read, cache_write_per_mtok: P.write, cache_write_1h_per_mtok: P.write1h }
const CP = { cachePoint: { type: 'default' } }

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: API_KEY, iam: IAM, region: REGION, models: [NOVA_ID, LLAMA_ID, PROFILE_ARN], profiles: { [PROFILE_ARN]: PROFILE_BASE } })
	m = await startMatrix({
		models: [NOVA, NEVER, LLAMA, CLAUDE].map((name) => ({ name, ...prices })),
		channels: (): GatewayConfig['channels'] => [
			{
				name: 'ac-br',
				type: 'bedrock',
				base_url: br.url,
				api_key: API_KEY,
				models: [NOVA, LLAMA, CLAUDE],
				model_map: { [NOVA]: NOVA_ID, [LLAMA]: LLAMA_ID, [CLAUDE]: PROFILE_ARN },
				settings: { base_models: { [PROFILE_ARN]: PROFILE_BASE } },
			},
			{ name: 'ac-br-never', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [NEVER], model_map: { [NEVER]: NOVA_ID }, settings: { auto_cache: 'never' } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const last = () => lastRequest(br)

type Turn = { role: 'user' | 'assistant'; content: string }
type Usage = { cached: number; output: number }

/** One request of `client` (the system prompt as `instructions` for Responses), its usage as the SDK read it. */
async function ask(acct: Account, client: 'chat' | 'responses', stream: boolean, model: string, system: string, turns: Turn[], hint: Record<string, unknown>): Promise<Usage> {
	if (client === 'chat') {
		const params = { model, messages: [{ role: 'system', content: system }, ...turns], ...hint } as never
		if (!stream) {
			const u = (await acct.openai.chat.completions.create(params)).usage!
			return { cached: u.prompt_tokens_details!.cached_tokens!, output: u.completion_tokens }
		}
		let u
		for await (const c of (await acct.openai.chat.completions.create({ ...(params as object), stream: true, stream_options: { include_usage: true } } as never)) as unknown as AsyncIterable<{ usage?: any }>) u = c.usage ?? u
		return { cached: u.prompt_tokens_details.cached_tokens, output: u.completion_tokens }
	}
	const params = { model, instructions: system, input: turns, ...hint } as never
	let u: any
	if (!stream) u = (await acct.openai.responses.create(params)).usage
	else for await (const e of (await acct.openai.responses.create({ ...(params as object), stream: true } as never)) as unknown as AsyncIterable<any>) if (e.type === 'response.completed') u = e.response.usage
	return { cached: u.input_tokens_details.cached_tokens, output: u.output_tokens }
}

const words = (...ts: string[]) => ts.reduce((n, t) => n + countWords(t), 0)

/** Micro-USD of a request, computed apart from the gateway's billing: one exact sum, one half-up rounding. */
const micros = (t: { input: number; write: number; read: number; output: number }) => Math.round(t.input * P.input + t.write * P.write + t.read * P.read + t.output * P.output + 1e-9)

type CacheRow = { input_tokens: number; cached_tokens: number; cache_write_tokens: number; cost: number }

describe('an OpenAI client with prompt_cache_key on Nova over Converse', () => {
	for (const client of ['chat', 'responses'] as const)
		for (const stream of [false, true])
			it(`should send cache points and read the last turn's prompt on the next, billed at the read and write prices (${client}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				// A prompt of its own: the mock's cache, like Bedrock's, outlives one test.
				const tag = `${client} ${stream ? 'streamed' : 'whole'}`
				const system = `You review the ${tag} project for its maintainers.`
				const u1 = `please review the parser module of the ${tag} project carefully`
				const hint = { prompt_cache_key: `session-${client}-${stream}` }
				const first = await ask(acct, client, stream, NOVA, system, [{ role: 'user', content: u1 }], hint)
				const body1 = last().body
				expect(last().path).toBe(`/model/${encodeURIComponent(NOVA_ID)}/${stream ? 'converse-stream' : 'converse'}`)
				expect(body1.system).toEqual([{ text: system }])
				expect(body1.messages).toEqual([{ role: 'user', content: [{ text: u1 }, CP] }])
				expect(first.cached).toBe(0)

				const a1 = 'the parser looks fine'
				const u2 = 'now review the lexer too'
				const second = await ask(acct, client, stream, NOVA, system, [{ role: 'user', content: u1 }, { role: 'assistant', content: a1 }, { role: 'user', content: u2 }], hint)
				// Where the first turn's point was, so its prefix is read; and at the end, for the next turn.
				expect(last().body.messages).toEqual([
					{ role: 'user', content: [{ text: u1 }, CP] },
					{ role: 'assistant', content: [{ text: a1 }] },
					{ role: 'user', content: [{ text: u2 }, CP] },
				])
				expect(second.cached).toBe(words(system, u1))

				const rows = (await usageRows(m, acct.accountId)) as unknown as CacheRow[]
				expect(rows.map((r) => [r.input_tokens, r.cached_tokens, r.cache_write_tokens])).toEqual([
					[words(system, u1), 0, words(system, u1)],
					[words(system, u1, a1, u2), words(system, u1), words(a1, u2)],
				])
				expect(rows.map((r) => Math.round(r.cost * 1e6))).toEqual([
					micros({ input: 0, write: words(system, u1), read: 0, output: first.output }),
					micros({ input: 0, write: words(a1, u2), read: words(system, u1), output: second.output }),
				])
			})

	it("should put the last point after an agent's tool result, and the previous one after the turn before its tool call", async () => {
		const acct = await m.account()
		const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Look a term up', parameters: { type: 'object', properties: { term: { type: 'string' } } } } }]
		const u1 = 'look the word lexer up for the tool turn'
		const messages = [
			{ role: 'user', content: u1 },
			{ role: 'assistant', content: null, tool_calls: [{ id: 'call_lookup1', type: 'function', function: { name: 'lookup', arguments: '{"term":"lexer"}' } }] },
			{ role: 'tool', tool_call_id: 'call_lookup1', content: 'a lexer splits text into tokens' },
		]
		await acct.openai.chat.completions.create({ model: NOVA, messages, tools, prompt_cache_key: 'agent' } as never)
		expect(last().body.messages).toEqual([
			{ role: 'user', content: [{ text: u1 }, CP] },
			{ role: 'assistant', content: [{ toolUse: { toolUseId: 'call_lookup1', name: 'lookup', input: { term: 'lexer' } } }] },
			{ role: 'user', content: [{ toolResult: { toolUseId: 'call_lookup1', content: [{ text: 'a lexer splits text into tokens' }] } }, CP] },
		])
	})

	it('should send no TTL for prompt_cache_retention 24h, nor hold its cost at the 1-hour write price, and bill the write at the 5-minute price', async () => {
		const system = 'You summarise retention policy documents for the compliance team in a few plain sentences each.'
		// Two accounts of a balance too small for the model's whole answer: the cap the budget imposes shows the rate
		// the input was held at (the 1-hour write price would leave far less for the answer).
		const caps: number[] = []
		for (const retention of ['in_memory', '24h']) {
			const acct = await m.account(0.002)
			// Prompts of one length (one bound), not one prefix (the second would be read from the first's cache).
			const u = `summarise the retention policy document for the ${retention === '24h' ? 'alpha' : 'omega'} case`
			const usage = await ask(acct, 'chat', false, NOVA, system, [{ role: 'user', content: u }], { prompt_cache_key: `retention-${retention}`, prompt_cache_retention: retention })
			const body = last().body
			expect(body.messages).toEqual([{ role: 'user', content: [{ text: u }, CP] }])
			caps.push(body.inferenceConfig.maxTokens)
			if (retention !== '24h') continue
			const [row] = (await usageRows(m, acct.accountId)) as unknown as CacheRow[]
			expect(row!.cache_write_tokens).toBe(words(system, u))
			expect(Math.round(row!.cost * 1e6)).toBe(micros({ input: 0, write: words(system, u), read: 0, output: usage.output }))
		}
		expect(caps[0]).toBeGreaterThan(0)
		expect(caps[1]).toBe(caps[0]!)
	})

	it("should leave the client's own breakpoints as they are", async () => {
		const acct = await m.account()
		const text = 'a long reference text the client marked itself on Nova'
		const messages = [{ role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'and a question' }] }]
		await acct.openai.chat.completions.create({ model: NOVA, messages, prompt_cache_key: 'own' } as never)
		expect(last().body.messages).toEqual([{ role: 'user', content: [{ text }, CP, { text: 'and a question' }] }])
	})
})

describe('no cache points added', () => {
	it('should add none without prompt_cache_key (the default setting), nor on a channel with auto_cache never', async () => {
		const acct = await m.account()
		for (const client of ['chat', 'responses'] as const) {
			await ask(acct, client, false, NOVA, 'Answer briefly.', [{ role: 'user', content: `an uncached question from the ${client} client` }], {})
			expect(JSON.stringify(last().body)).not.toContain('cachePoint')
			await ask(acct, client, false, NEVER, 'Answer briefly.', [{ role: 'user', content: `a never cached question from the ${client} client` }], { prompt_cache_key: 'k' })
			expect(JSON.stringify(last().body)).not.toContain('cachePoint')
		}
	})

	it('should add none for a family without prompt caching (Llama), which would refuse them', async () => {
		const acct = await m.account()
		const a = await ask(acct, 'chat', false, LLAMA, 'Answer briefly.', [{ role: 'user', content: 'a question for llama' }], { prompt_cache_key: 'k' })
		expect(a.cached).toBe(0)
		expect(last().path).toBe(`/model/${encodeURIComponent(LLAMA_ID)}/converse`)
		expect(JSON.stringify(last().body)).not.toContain('cachePoint')
	})

	it("should mark Claude's last block over InvokeModel for a profile mapped to Claude, with no cache point", async () => {
		const acct = await m.account()
		await ask(acct, 'chat', false, CLAUDE, 'Answer briefly.', [{ role: 'user', content: 'a question for claude' }], { prompt_cache_key: 'k' })
		expect(last().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/invoke`)
		const body = last().body
		expect(body.cache_control).toBeUndefined()
		expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a question for claude', cache_control: { type: 'ephemeral' } }] }])
		expect(JSON.stringify(body)).not.toContain('cachePoint')
	})
})
