/**
 * The less common features of `@anthropic-ai/sdk` through the gateway, against each vendor (Anthropic's own is the
 * same-protocol fast path): server tools, prompt caching (writes and reads, billed), tool_choice none and
 * disable_parallel_tool_use, metadata.user_id, system blocks with cache_control, the stream helpers and
 * count_tokens. Checked against https://docs.anthropic.com/en/api/messages, /en/docs/build-with-claude/prompt-caching
 * and /en/docs/agents-and-tools/tool-use/web-search-tool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { countWords } from '../../mocks'
import { messages } from './clients'
import { expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'

/** USD per million tokens Anthropic charges for 5-minute cache writes on claude-m (1.25 × the input price). */
const CACHE_WRITE = 3.75

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ models: [{ name: 'claude-m', cache_write_per_mtok: CACHE_WRITE }] })
}, SETUP_MS)
afterAll(() => m.close())

const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 } as const
/** A server tool no other vendor runs (the web search is another's own search: web-search-converted.test.ts). */
const CODE_EXECUTION = { type: 'code_execution_20250825', name: 'code_execution' } as const
const WEATHER: Anthropic.Messages.Tool = { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }

describe('Anthropic server tools', () => {
	for (const [up, stream] of PAIRS) {
		if (up === 'anthropic') {
			it(`should pass a server tool to Anthropic where it stood (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const a = await messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, tools: [WEATHER, WEB_SEARCH], messages: [{ role: 'user', content: 'news today' }] }, stream)
				expect(a.text).toBe('Hello! You said: news today')
				expect(lastRequest(m.mocks.anthropic).body.tools).toEqual([WEATHER, WEB_SEARCH])
			})
			continue
		}
		it(`should refuse a server tool with a 400 naming it rather than drop it (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const call = messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, tools: [WEATHER, CODE_EXECUTION], messages: [{ role: 'user', content: 'news today' }] }, stream)
			const err = (await call.catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
			expect(err).toBeInstanceOf(Anthropic.BadRequestError)
			expect(err.status).toBe(400)
			expect((err.error as { error: { type: string } }).error.type).toBe('invalid_request_error')
			expect(err.message).toContain('tools.1')
			expect(err.message).toContain('code_execution_20250825')
			expect(err.message).toContain(MODEL[up])
			// Nothing went upstream and nothing was charged.
			expect(m.mocks[up].requests.length).toBe(before)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
	}
})

describe('Anthropic search_result blocks', () => {
	const result = { type: 'search_result', source: 'https://docs.example/handbook', title: 'Handbook', content: [{ type: 'text', text: 'the secret fact' }] }
	const post = (acct: { key: string }, body: unknown) =>
		fetch(`${m.app.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) })

	for (const up of UPSTREAMS) {
		it(`should ${up === 'anthropic' ? 'pass a search_result to Anthropic as written' : 'refuse a search_result rather than drop its content'} (${up} upstream)`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const messages = [{ role: 'user', content: [result, { type: 'text', text: 'what does it say' }] }]
			const r = await post(acct, { model: MODEL[up], max_tokens: 50, messages })
			const body = (await r.json()) as { type: string; error?: { type: string; message: string } }
			if (up === 'anthropic') {
				expect(r.status).toBe(200)
				expect(lastRequest(m.mocks.anthropic).body.messages).toEqual(messages)
				return
			}
			expect(r.status).toBe(400)
			expect(body.error?.type).toBe('invalid_request_error')
			expect(body.error?.message).toStartWith('messages.0.content.0: a search_result block is only available on Anthropic')
			expect(m.mocks[up].requests.length).toBe(before)
		})
	}

	it('should refuse a search_result inside a tool result, naming where it stood', async () => {
		const acct = await m.account()
		const r = await post(acct, {
			model: MODEL.gemini,
			max_tokens: 50,
			tools: [WEATHER],
			messages: [
				{ role: 'user', content: 'look it up' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [result] }] },
			],
		})
		expect(r.status).toBe(400)
		expect(((await r.json()) as { error: { message: string } }).error.message).toStartWith('messages.2.content.0.content.0: a search_result block')
	})

	it('should continue a conversation whose earlier Anthropic turn used web search on another vendor (the turn keeps its text)', async () => {
		const acct = await m.account()
		const r = await post(acct, {
			model: MODEL.openai,
			max_tokens: 50,
			messages: [
				{ role: 'user', content: 'news' },
				{
					role: 'assistant',
					content: [
						{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } },
						{ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://a.example', title: 'A', encrypted_content: 'enc' }] },
						{ type: 'text', text: 'Here is the news.' },
					],
				},
				{ role: 'user', content: 'more' },
			],
		})
		expect(r.status).toBe(200)
		expect(lastRequest(m.mocks.openai).body.messages).toEqual([
			{ role: 'user', content: 'news' },
			{ role: 'assistant', content: 'Here is the news.' },
			{ role: 'user', content: 'more' },
		])
	})
})

describe('Anthropic prompt caching', () => {
	const system: Anthropic.Messages.TextBlockParam[] = [
		{ type: 'text', text: 'You answer questions about the long handbook below #write-cache', cache_control: { type: 'ephemeral' } },
		{ type: 'text', text: 'handbook '.repeat(12).trim() },
	]
	const user = 'what does it say'
	const input = countWords(system.map((s) => s.text).join(' ')) + countWords(user)

	for (const stream of [false, true]) {
		it(`should report cache writes with their TTL split and bill them at the cache-write price (anthropic upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.anthropic, max_tokens: 100, system, messages: [{ role: 'user' as const, content: user }] }
			let usage: Anthropic.Messages.Usage
			let startUsage: Anthropic.Messages.Usage | undefined
			if (stream) {
				const s = acct.anthropic.messages.stream(params)
				s.on('streamEvent', (e) => {
					if (e.type === 'message_start') startUsage = structuredClone(e.message.usage)
				})
				usage = (await s.finalMessage()).usage
			} else usage = (await acct.anthropic.messages.create(params)).usage
			// The system blocks went upstream as written, cache_control included.
			expect(lastRequest(m.mocks.anthropic).body.system).toEqual(system)
			expect(usage.cache_creation_input_tokens).toBe(10)
			expect(usage.cache_read_input_tokens).toBe(0)
			expect(usage.input_tokens).toBe(input - 10)
			expect(usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 0 })
			if (stream) expect(startUsage?.cache_creation_input_tokens).toBe(10)
			const output = countWords(`Hello! You said: ${user}`)
			const [row] = await usageRows(m, acct.accountId)
			expect(row).toMatchObject({ input_tokens: input, output_tokens: output, cached_tokens: 0, stream })
			expect((row as unknown as { cache_write_tokens: number }).cache_write_tokens).toBe(10)
			// 10 tokens at the write price, the rest at the input price, the answer at the output price.
			const micros = (usd: number) => BigInt(Math.round(usd * 1e6))
			const num = BigInt(input - 10) * micros(3) + 10n * micros(CACHE_WRITE) + BigInt(output) * micros(15)
			expect(Math.round(row!.cost * 1e6)).toBe(Number((num * 2n + 1_000_000n) / 2_000_000n))
		})
	}

	for (const [up, stream] of PAIRS) {
		it(`should report cache reads in the Anthropic fields and bill them at the cache-read price (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const sys: Anthropic.Messages.TextBlockParam[] = [{ type: 'text', text: 'be helpful #cache and precise '.repeat(3).trim(), cache_control: { type: 'ephemeral' } }]
			const a = await messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, system: sys, messages: [{ role: 'user', content: user }] }, stream)
			const total = countWords(sys[0]!.text) + countWords(user)
			expect(a.usage).toMatchObject({ input: total, cached: 10 })
			await expectCharges(m, acct, [{ model: MODEL[up], input: total, output: countWords(`Hello! You said: ${user}`), cached: 10, stream }])
		})
	}
})

describe('Anthropic tool_choice', () => {
	for (const [up, stream] of PAIRS) {
		it(`should send tool_choice none and answer in text although the tools are offered (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, tools: [WEATHER], tool_choice: { type: 'none' }, messages: [{ role: 'user', content: 'weather please #tools' }] }, stream)
			expect(a.calls).toEqual([])
			expect(a.text).toBe('Hello! You said: weather please #tools')
			expect(a.stop).toBe('end_turn')
			const body = lastRequest(m.mocks[up]).body
			const sent = up === 'openai' ? body.tool_choice : up === 'anthropic' ? body.tool_choice : body.toolConfig
			expect(sent).toEqual(up === 'openai' ? 'none' : up === 'anthropic' ? { type: 'none' } : { functionCallingConfig: { mode: 'NONE' } })
		})

		it(`should force the named tool and carry disable_parallel_tool_use (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const other: Anthropic.Messages.Tool = { name: 'lookup', input_schema: { type: 'object', properties: { query: { type: 'string' } } } }
			const a = await messages(
				acct.anthropic,
				{ model: MODEL[up], max_tokens: 100, tools: [WEATHER, other], tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true }, messages: [{ role: 'user', content: 'find it' }] },
				stream,
			)
			expect(a.calls.map((c) => [c.name, c.args])).toEqual([['lookup', { query: 'find it' }]])
			expect(a.stop).toBe('tool_use')
			const body = lastRequest(m.mocks[up]).body
			if (up === 'openai') {
				expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } })
				expect(body.parallel_tool_calls).toBe(false)
			} else if (up === 'anthropic') expect(body.tool_choice).toEqual({ type: 'tool', name: 'lookup', disable_parallel_tool_use: true })
			// Gemini has no switch for parallel calls: the forced function is what it can honour.
			else expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } })
		})
	}
})

describe('Anthropic tool_choice forcing a tool not offered', () => {
	const refused = async (up: Upstream, body: Anthropic.MessageCreateParamsNonStreaming, stream: boolean) => {
		const acct = await m.account()
		const before = m.mocks[up].requests.length
		const err = (await messages(acct.anthropic, body, stream).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect((err.error as { error: { type: string } }).error.type).toBe('invalid_request_error')
		// Refused before any upstream call or charge (also the counting of the same body).
		expect(m.mocks[up].requests.length).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		const counted = (await acct.anthropic.messages.countTokens({ model: body.model, messages: body.messages, tools: body.tools, tool_choice: body.tool_choice }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
		expect(counted).toBeInstanceOf(Anthropic.BadRequestError)
		expect((counted.error as { error: unknown }).error).toEqual((err.error as { error: unknown }).error)
		expect(m.mocks[up].requests.length).toBe(before)
		return err
	}
	for (const [up, stream] of PAIRS) {
		it(`should refuse a tool_choice naming a tool not among the tools, rather than forward it (${label(up, stream)})`, async () => {
			const err = await refused(up, { model: MODEL[up], max_tokens: 100, tools: [WEATHER], tool_choice: { type: 'tool', name: 'Nope' }, messages: [{ role: 'user', content: 'hi' }] }, stream)
			expect(err.message).toContain("tool_choice.name: tool 'Nope' is not among the request's tools")
		})

		it(`should refuse tool_choice any and tool with no tools, rather than drop it (${label(up, stream)})`, async () => {
			const any = await refused(up, { model: MODEL[up], max_tokens: 100, tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'hi' }] }, stream)
			expect(any.message).toContain("tool_choice: type 'any' forces a tool call, but the request has no `tools`")
			const tool = await refused(up, { model: MODEL[up], max_tokens: 100, tools: [], tool_choice: { type: 'tool', name: 'weather' }, messages: [{ role: 'user', content: 'hi' }] }, stream)
			expect(tool.message).toContain("tool_choice: type 'tool' forces a tool call, but the request has no `tools`")
		})
	}
})

describe('Anthropic messages with empty content', () => {
	const RULE = 'messages.0: all messages must have non-empty content except for the optional final assistant message'
	for (const [up, stream] of PAIRS)
		for (const content of ['', []] as Array<string | []>)
			it(`should refuse an empty user message in Anthropic's words before any upstream call (${label(up, stream)}, ${JSON.stringify(content)})`, async () => {
				const acct = await m.account()
				const before = m.mocks[up].requests.length
				const err = (await messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, messages: [{ role: 'user', content }] }, stream).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
				expect(err).toBeInstanceOf(Anthropic.BadRequestError)
				expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: RULE } })
				expect(m.mocks[up].requests.length).toBe(before)
				expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
			})
	for (const up of UPSTREAMS)
		it(`should still take an empty final assistant message, the prefill (${up} upstream)`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: '' }] }, false)
			expect(a.stop).toBe('end_turn')
		})
})

describe('Anthropic metadata, sampling and stream helpers', () => {
	for (const up of UPSTREAMS) {
		it(`should pass metadata.user_id as the vendor's end-user field (${up} upstream)`, async () => {
			const acct = await m.account()
			await acct.anthropic.messages.create({ model: MODEL[up], max_tokens: 50, metadata: { user_id: 'user-42' }, messages: [{ role: 'user', content: 'hi' }] })
			const body = lastRequest(m.mocks[up]).body
			if (up === 'openai') expect(body.user).toBe('user-42')
			else if (up === 'anthropic') expect(body.metadata).toEqual({ user_id: 'user-42' })
			// Gemini's API has no end-user field: nothing to send, and nothing invented.
			else expect(JSON.stringify(body)).not.toContain('user-42')
		})

		it(`should give inputJson partial snapshots and a finalMessage with parsed tool input (${up} upstream)`, async () => {
			const acct = await m.account()
			const s = acct.anthropic.messages.stream({ model: MODEL[up], max_tokens: 100, tools: [WEATHER], messages: [{ role: 'user', content: 'weather #tools' }] })
			const snapshots: unknown[] = []
			let text = ''
			s.on('inputJson', (_partial, snapshot) => snapshots.push(snapshot))
			s.on('text', (t) => (text += t))
			const final = await s.finalMessage()
			expect(text).toBe('')
			expect(final.stop_reason).toBe('tool_use')
			const inputs = final.content.flatMap((b) => (b.type === 'tool_use' ? [b.input] : []))
			expect(inputs).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
			// Each call's last snapshot is its whole input.
			expect(snapshots).toContainEqual({ city: 'Paris' })
			expect(snapshots).toContainEqual({ city: 'Tokyo' })
		})
	}

	it('should send top_k to Gemini as generationConfig.topK', async () => {
		// SDK 1.x dropped the sampling parameters (API version 2026-10-21 refuses them); older clients still send them.
		const acct = await m.account()
		const r = await fetch(`${m.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' },
			body: JSON.stringify({ model: MODEL.gemini, max_tokens: 50, top_k: 7, temperature: 0.3, messages: [{ role: 'user', content: 'hi' }] }),
		})
		expect(r.status).toBe(200)
		expect(lastRequest(m.mocks.gemini).body.generationConfig).toMatchObject({ topK: 7, temperature: 0.3 })
	})
})

describe('Anthropic version and beta headers', () => {
	for (const up of UPSTREAMS) {
		it(`should ${up === 'anthropic' ? "forward the client's anthropic-version and anthropic-beta" : 'accept anthropic-beta and not send it to another vendor'} (${up} upstream)`, async () => {
			const acct = await m.account()
			let version: string | null = null
			const client = new Anthropic({
				apiKey: acct.key,
				baseURL: m.app.url,
				maxRetries: 0,
				defaultHeaders: { 'anthropic-beta': 'context-management-2025-06-27' },
				fetch: (url, init) => {
					version = new Headers(init?.headers).get('anthropic-version')
					return fetch(url, init)
				},
			})
			const r = await client.messages.create({ model: MODEL[up], max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
			expect(r.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello! You said: hi'])
			const h = lastRequest(m.mocks[up]).headers
			if (up === 'anthropic') {
				expect(h['anthropic-beta']).toBe('context-management-2025-06-27')
				// The SDK's own API version, whatever it is, goes upstream unchanged on the same-protocol path.
				expect(version).toBeTruthy()
				expect(h['anthropic-version']).toBe(version!)
			} else expect(h['anthropic-beta']).toBeUndefined()
			// The count goes to Anthropic's counter with the same headers.
			if (up === 'anthropic') {
				await client.messages.countTokens({ model: MODEL[up], messages: [{ role: 'user', content: 'hi' }] })
				expect(lastRequest(m.mocks.anthropic).headers['anthropic-beta']).toBe('context-management-2025-06-27')
			}
		})
	}
})

describe('Anthropic count_tokens', () => {
	const params = (model: string): Anthropic.Messages.MessageCountTokensParams => ({
		model,
		system: [{ type: 'text', text: 'you are terse', cache_control: { type: 'ephemeral' } }],
		messages: [{ role: 'user', content: 'one two three four' }],
	})
	const counted: Record<Upstream, string> = { openai: 'estimate', anthropic: 'anthropic', gemini: 'gemini' }
	for (const up of UPSTREAMS) {
		it(`should count the system blocks and messages (${up} upstream) without charging`, async () => {
			const acct = await m.account()
			const { data, response } = await acct.anthropic.messages.countTokens(params(MODEL[up])).withResponse()
			expect(response.headers.get('x-switchboard-counted-by')).toBe(counted[up])
			// The vendors count words here; the local estimate uses a real tokenizer, so it is only positive.
			if (up === 'openai') expect(data.input_tokens).toBeGreaterThan(0)
			else expect(data.input_tokens).toBe(countWords('you are terse one two three four'))
			expect(await usageRows(m, acct.accountId)).toEqual([])
			expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6))
		})
	}
})
