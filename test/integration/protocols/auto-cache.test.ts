/**
 * Prompt caching for OpenAI clients on Claude (relay/auto-cache.ts): a chat-completions or Responses request with
 * `prompt_cache_key` asks Claude to cache its whole prompt (Anthropic's automatic caching: a top-level
 * `cache_control`), so an agent's next turn reads the replayed conversation from the cache; the reads come back as
 * `cached_tokens` and every token is billed at its price (writes at the cache-write price, 1-hour ones at theirs).
 * The channel's `settings.auto_cache` overrides when (`always`, `never`); a request with breakpoints of its own is
 * sent as it is. Through the official `openai` SDK against the Anthropic mock, which caches as Anthropic documents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAM_MODEL, usageRows } from './harness'

const ALWAYS = 'claude-always'
const NEVER = 'claude-never'
// USD per million tokens of the Claude models here: input, 5-minute and 1-hour cache writes, cache reads, output.
const P = { input: 3, write: 3.75, write1h: 6, read: 0.3, output: 15 }
const prices = { input_per_mtok: P.input, output_per_mtok: P.output, cache_read_per_mtok: P.read, cache_write_per_mtok: P.write, cache_write_1h_per_mtok: P.write1h }

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: MODEL.anthropic, ...prices }, { name: ALWAYS, ...prices }, { name: NEVER, ...prices }],
		channels: (mocks) =>
			[ALWAYS, NEVER].map((name) => ({
				name: `ch-${name}`,
				type: 'anthropic' as const,
				base_url: mocks.anthropic.url,
				api_key: 'up-anthropic',
				models: [name],
				model_map: { [name]: UPSTREAM_MODEL.anthropic },
				settings: { auto_cache: name === ALWAYS ? ('always' as const) : ('never' as const) },
			})),
	})
}, SETUP_MS)
afterAll(() => m.close())

type Turn = { role: 'user' | 'assistant'; content: string }
type Usage = { prompt: number; cached: number; output: number }

/** One request of `client`, its usage as the SDK read it (`cached_tokens` of the prompt). */
async function ask(acct: Account, client: 'chat' | 'responses', stream: boolean, model: string, turns: Turn[], hint: Record<string, unknown>): Promise<Usage> {
	if (client === 'chat') {
		const params = { model, messages: turns, ...hint } as never
		if (!stream) {
			const u = (await acct.openai.chat.completions.create(params)).usage!
			return { prompt: u.prompt_tokens, cached: u.prompt_tokens_details!.cached_tokens!, output: u.completion_tokens }
		}
		let u
		for await (const c of await acct.openai.chat.completions.create({ ...(params as object), stream: true, stream_options: { include_usage: true } } as never) as unknown as AsyncIterable<{ usage?: any }>) u = c.usage ?? u
		return { prompt: u.prompt_tokens, cached: u.prompt_tokens_details.cached_tokens, output: u.completion_tokens }
	}
	const params = { model, input: turns, ...hint } as never
	let u: any
	if (!stream) u = (await acct.openai.responses.create(params)).usage
	else for await (const e of await acct.openai.responses.create({ ...(params as object), stream: true } as never) as unknown as AsyncIterable<any>) if (e.type === 'response.completed') u = e.response.usage
	return { prompt: u.input_tokens, cached: u.input_tokens_details.cached_tokens, output: u.output_tokens }
}

/** Micro-USD of a request, computed apart from the gateway's billing: one exact sum, one half-up rounding. */
const micros = (t: { input: number; write: number; write1h?: number; read: number; output: number }) =>
	Math.round(t.input * P.input + t.write * (t.write1h ? P.write1h : P.write) + t.read * P.read + t.output * P.output + 1e-9)

const words = (...ts: string[]) => ts.reduce((n, t) => n + countWords(t), 0)

describe('an OpenAI client with prompt_cache_key on a Claude model', () => {
	for (const client of ['chat', 'responses'] as const)
		for (const stream of [false, true])
			it(`should have Claude cache the prompt and read it on the next turn, billed at the read price (${client}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const tag = `${client} ${stream ? 'streamed' : 'whole'}`
				const u1 = `please review the parser module of the ${tag} project carefully`
				const hint = { prompt_cache_key: `session-${client}-${stream}` }
				const first = await ask(acct, client, stream, MODEL.anthropic, [{ role: 'user', content: u1 }], hint)
				const body1 = lastRequest(m.mocks.anthropic).body
				expect(body1.cache_control).toEqual({ type: 'ephemeral' })
				expect(body1.prompt_cache_key).toBeUndefined()
				expect(first).toEqual({ prompt: words(u1), cached: 0, output: first.output })

				const a1 = 'the parser looks fine'
				const u2 = 'now review the lexer too'
				const second = await ask(acct, client, stream, MODEL.anthropic, [{ role: 'user', content: u1 }, { role: 'assistant', content: a1 }, { role: 'user', content: u2 }], hint)
				expect(lastRequest(m.mocks.anthropic).body.cache_control).toEqual({ type: 'ephemeral' })
				// The first turn's prompt is read from the cache; the rest is written for the next one.
				expect(second).toEqual({ prompt: words(u1, a1, u2), cached: words(u1), output: second.output })

				const rows = await usageRows(m, acct.accountId)
				expect(rows.map((r) => [r.input_tokens, r.cached_tokens])).toEqual([[words(u1), 0], [words(u1, a1, u2), words(u1)]])
				expect(rows.map((r) => Math.round(r.cost * 1e6))).toEqual([
					micros({ input: 0, write: words(u1), read: 0, output: first.output }),
					micros({ input: 0, write: words(a1, u2), read: words(u1), output: second.output }),
				])
			})

	it('should cache for an hour with prompt_cache_retention 24h, billed at the 1-hour write price', async () => {
		const acct = await m.account()
		const u1 = 'summarise the retention policy document for the extended case'
		const usage = await ask(acct, 'chat', false, MODEL.anthropic, [{ role: 'user', content: u1 }], { prompt_cache_key: 'long', prompt_cache_retention: '24h' })
		expect(lastRequest(m.mocks.anthropic).body.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
		const [row] = await usageRows(m, acct.accountId)
		expect(Math.round(row!.cost * 1e6)).toBe(micros({ input: 0, write: words(u1), write1h: words(u1), read: 0, output: usage.output }))
	})

	it('should send nothing more without prompt_cache_key (the default setting)', async () => {
		const acct = await m.account()
		for (const client of ['chat', 'responses'] as const) {
			const u = `an uncached question from the ${client} client`
			const usage = await ask(acct, client, false, MODEL.anthropic, [{ role: 'user', content: u }], {})
			expect(lastRequest(m.mocks.anthropic).body.cache_control).toBeUndefined()
			expect(usage.cached).toBe(0)
		}
	})

	it("should leave the client's own breakpoints as they are", async () => {
		const acct = await m.account()
		const text = 'a long reference text the client marked itself'
		const messages = [{ role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }] }]
		await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages, prompt_cache_key: 'own' } as never)
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.cache_control).toBeUndefined()
		expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }] }])
	})
})

describe('settings.auto_cache', () => {
	it('always: should cache every OpenAI client request, without prompt_cache_key too', async () => {
		const acct = await m.account()
		for (const client of ['chat', 'responses'] as const) {
			await ask(acct, client, false, ALWAYS, [{ role: 'user', content: `always cached for the ${client} client` }], {})
			expect(lastRequest(m.mocks.anthropic).body.cache_control).toEqual({ type: 'ephemeral' })
		}
	})

	it('never: should not cache, with prompt_cache_key too', async () => {
		const acct = await m.account()
		for (const client of ['chat', 'responses'] as const) {
			await ask(acct, client, false, NEVER, [{ role: 'user', content: `never cached for the ${client} client` }], { prompt_cache_key: 'k' })
			expect(lastRequest(m.mocks.anthropic).body.cache_control).toBeUndefined()
		}
	})
})
