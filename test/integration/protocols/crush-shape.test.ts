/**
 * Crush 0.96.1 (Charmbracelet's coding agent, `@charmland/crush`) as its Go code sends and reads the wire: its LLM layer
 * (charm.land/fantasy) over the official Go SDKs, openai-go and anthropic-sdk-go. The CLI could not be run here (its npm
 * package downloads the Go binary from GitHub at install), so these shapes are taken from the sources of those versions,
 * not recorded: a provider of type `openai` sends a GPT-5/o-series model to `/v1/responses` (`store: false`,
 * `include: ["reasoning.encrypted_content"]`, `reasoning.summary: "auto"`, a `developer` message, tools with
 * `strict: false`) and any other model (Claude, Gemini) to `/v1/chat/completions` (`max_tokens`,
 * `stream_options.include_usage`, string contents, an assistant turn of `tool_calls` without `content`); a provider of
 * type `anthropic` posts `{base_url}/v1/messages` with `X-Api-Key`, `cache_control` on the system, the last tool and the
 * last message, `input_schema` with `required: []`, and a tool result as a list of text blocks.
 * What the Go readers need: fantasy's chat reader takes a tool call as done once its accumulated `arguments` parse as
 * JSON (a call whose arguments stay `""` is never run), the first delta of a call must carry `id`, `type` and
 * `function.name`; anthropic-sdk-go's accumulator needs `message_start` first and every delta's `index` on a block it
 * saw start; openai-go ends a stream with an error on a `data:` whose JSON has a top-level `error`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { parseSse } from '../../../src/core/sse'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithCatalogModel, usageRows } from './harness'

/** A Responses model of Crush's (fantasy's `IsResponsesModel`), served by an OpenAI channel under its name. */
const GPT = 'gpt-5'
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithCatalogModel(GPT)
}, SETUP_MS)
afterAll(() => m.close())

type Obj = Record<string, any>
/** What Crush's `ls` tool returned, sent back as the call's result. */
const LISTING = '- /work/repo/\n  - README.md\n'
const SYSTEM = 'You are Crush, a powerful AI Assistant that runs in the CLI.\n\n<env>\nWorking directory: /work/repo\nPlatform: linux\n</env>'

/** Two of Crush's tools, descriptions shortened: `ls` (no required parameter, so a call may have none) and `view`. */
const TOOLS = [
	{
		name: 'ls',
		description: 'Shows files and subdirectories in a tree structure.',
		schema: { properties: { path: { type: 'string', description: 'The path to the directory to list' }, ignore: { type: 'array', items: { type: 'string' } } }, required: [] },
	},
	{
		name: 'view',
		description: 'Reads and displays file contents with line numbers.',
		schema: { properties: { file_path: { type: 'string', description: 'The path to the file to read' }, offset: { type: 'integer' }, limit: { type: 'integer' } }, required: ['file_path'] },
	},
]

/** The headers openai-go and anthropic-sdk-go send (Go's canonical casing). */
const goHeaders = (sdk: 'OpenAI' | 'Anthropic', version: string): Record<string, string> => ({
	Accept: 'application/json',
	'Content-Type': 'application/json',
	'User-Agent': `${sdk}/Go ${version}`,
	'X-Stainless-Arch': 'x64',
	'X-Stainless-Lang': 'go',
	'X-Stainless-Os': 'Linux',
	'X-Stainless-Package-Version': version,
	'X-Stainless-Retry-Count': '0',
	'X-Stainless-Runtime': 'go',
	'X-Stainless-Runtime-Version': 'go1.25.5',
	'X-Stainless-Timeout': '600',
})
const openaiHeaders = (acct: Account) => ({ ...goHeaders('OpenAI', '2.7.1'), Authorization: `Bearer ${acct.key}` })
const anthropicHeaders = (acct: Account, beta?: string) => ({
	...goHeaders('Anthropic', '1.19.0'),
	'X-Api-Key': acct.key,
	'Anthropic-Version': '2023-06-01',
	...(beta && { 'Anthropic-Beta': beta }),
})

const post = (path: string, headers: Record<string, string>, body: unknown) => fetch(`${m.app.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })

/** A Chat Completions body as fantasy's openai provider builds it for a model outside the Responses list. */
const chatBody = (model: string, messages: Obj[]) => ({
	max_tokens: 5000,
	messages: [{ content: SYSTEM, role: 'system' }, ...messages],
	model,
	stream_options: { include_usage: true },
	tools: TOOLS.map((t) => ({ function: { name: t.name, description: t.description, parameters: { type: 'object', ...t.schema }, strict: false }, type: 'function' })),
	stream: true,
})

/** fantasy's replay of a turn that only called a tool: no `content` key. */
const callTurn = (id: string, args: string) => ({ role: 'assistant', tool_calls: [{ id, function: { arguments: args, name: 'ls' }, type: 'function' }] })

type ChatTurn = { text: string; calls: Array<{ id: string; name: string; input: string }>; finish?: string; usage?: Obj; done: boolean }

/** Reads a chat stream as fantasy's openai language model does (a call is emitted once its arguments are valid JSON). */
async function readChat(res: Response): Promise<ChatTurn> {
	expect(res.status).toBe(200)
	expect(res.headers.get('content-type')).toContain('text/event-stream')
	const out: ChatTurn = { text: '', calls: [], done: false }
	const open = new Map<number, { id: string; name: string; args: string; finished: boolean }>()
	const valid = (s: string) => {
		try {
			JSON.parse(s)
			return true
		} catch {
			return false
		}
	}
	for await (const f of parseSse(res.body!)) {
		if (f.data === '[DONE]') {
			out.done = true
			continue
		}
		const chunk = JSON.parse(f.data)
		// openai-go ends the stream with an error on any top-level `error` key, `null` included.
		expect('error' in chunk).toBe(false)
		if (chunk.usage) out.usage = chunk.usage
		for (const choice of chunk.choices ?? []) {
			if (choice.finish_reason) out.finish = choice.finish_reason
			if (choice.delta.content) out.text += choice.delta.content
			else
				for (const d of choice.delta.tool_calls ?? []) {
					const call = open.get(d.index)
					if (!call) {
						// fantasy refuses a first delta without these three.
						expect([d.type, typeof d.id, typeof d.function?.name]).toEqual(['function', 'string', 'string'])
						open.set(d.index, { id: d.id, name: d.function.name, args: d.function.arguments ?? '', finished: false })
					} else if (!call.finished) call.args += d.function?.arguments ?? ''
					const c = open.get(d.index)!
					if (!c.finished && c.args && valid(c.args)) {
						c.finished = true
						out.calls.push({ id: c.id, name: c.name, input: c.args })
					}
				}
		}
	}
	return out
}

/** A Responses body as fantasy builds it for a reasoning model (`reasoning_summary: auto` and the encrypted reasoning are Crush's). */
const responsesBody = (input: Obj[]) => ({
	include: ['reasoning.encrypted_content'],
	input: [{ content: SYSTEM, role: 'developer' }, ...input],
	max_output_tokens: 5000,
	model: GPT,
	reasoning: { effort: 'medium', summary: 'auto' },
	store: false,
	tools: TOOLS.map((t) => ({ name: t.name, parameters: { type: 'object', ...t.schema }, strict: false, type: 'function', description: t.description })),
	stream: true,
})

/** An Anthropic body as fantasy's anthropic provider builds it, with Crush's cache marks (system, last tool, last message). */
const messagesBody = (model: string, messages: Obj[], thinking?: number) => ({
	max_tokens: 5000 + (thinking ?? 0),
	messages,
	model,
	system: [{ text: SYSTEM, cache_control: { type: 'ephemeral' }, type: 'text' }],
	...(thinking && { thinking: { budget_tokens: thinking, type: 'enabled' } }),
	tools: TOOLS.map((t, i) => ({
		input_schema: { ...t.schema, type: 'object' },
		name: t.name,
		description: t.description,
		...(i === TOOLS.length - 1 && { cache_control: { type: 'ephemeral' } }),
	})),
	stream: true,
})
const userText = (text: string) => ({ content: [{ text, cache_control: { type: 'ephemeral' }, type: 'text' }], role: 'user' })

type MessagesTurn = { blocks: Obj[]; stop?: string; usage: Obj }

/** Reads an Anthropic stream as anthropic-sdk-go's `Message.Accumulate` does, failing where it would. */
async function readMessages(res: Response): Promise<MessagesTurn> {
	expect(res.status).toBe(200)
	const out: MessagesTurn = { blocks: [], usage: {} }
	let started = false
	const json: string[] = []
	for await (const f of parseSse(res.body!)) {
		const ev = JSON.parse(f.data)
		expect(ev.type).toBe(f.event!)
		if (ev.type === 'ping') continue
		expect(ev.type).not.toBe('error')
		if (ev.type === 'message_start') {
			started = true
			out.usage = { ...ev.message.usage }
			continue
		}
		expect(started).toBe(true)
		if (ev.type === 'content_block_start') {
			expect(ev.index).toBe(out.blocks.length)
			out.blocks.push({ ...ev.content_block })
			json.push('')
		} else if (ev.type === 'content_block_delta') {
			const b = out.blocks[ev.index]
			expect(b).toBeDefined()
			if (ev.delta.type === 'text_delta') b!.text += ev.delta.text
			else if (ev.delta.type === 'input_json_delta') json[ev.index] += ev.delta.partial_json
			else if (ev.delta.type === 'thinking_delta') b!.thinking += ev.delta.thinking
			else if (ev.delta.type === 'signature_delta') b!.signature = ev.delta.signature
		} else if (ev.type === 'content_block_stop') {
			const b = out.blocks[ev.index]!
			if (b.type === 'tool_use' && json[ev.index]) b.input = JSON.parse(json[ev.index]!)
		} else if (ev.type === 'message_delta') {
			out.stop = ev.delta.stop_reason
			out.usage = { ...out.usage, ...ev.usage }
		}
	}
	return out
}

describe('Crush 0.96.1 through its openai provider: Chat Completions for Claude and Gemini (converted)', () => {
	for (const up of ['anthropic', 'gemini'] as const)
		it(`should hand fantasy a runnable call of a tool without arguments and run the loop on ${up}`, async () => {
			const acct = await m.account()
			const ask = { content: 'list the files here #call ls {}', role: 'user' }
			const first = await readChat(await post('/v1/chat/completions', openaiHeaders(acct), chatBody(MODEL[up], [ask])))
			// Claude streams a call without parameters as `partial_json: ""`: with `arguments` left at "" fantasy never ran it.
			expect(first.calls.map((c) => [c.name, c.input])).toEqual([['ls', '{}']])
			expect([first.finish, first.done]).toEqual(['tool_calls', true])
			expect(first.usage!.prompt_tokens).toBeGreaterThan(0)
			const call = first.calls[0]!
			// fantasy replays the call (callTurn) and the result as a string.
			const replay = [ask, callTurn(call.id, call.input), { content: LISTING, tool_call_id: call.id, role: 'tool' }]
			const second = await readChat(await post('/v1/chat/completions', openaiHeaders(acct), chatBody(MODEL[up], replay)))
			expect(second.text).toBe(`Tool results: ${LISTING}`)
			expect([second.finish, second.done]).toEqual(['stop', true])
			// The usage fantasy reads from the last chunk is the one billed.
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.input_tokens, r.output_tokens])).toContainEqual([second.usage!.prompt_tokens, second.usage!.completion_tokens])
		})

	// Its `openai-compat` type is the same client plus `reasoning_effort` and a reader of `delta.reasoning_content`.
	it('should stream Claude\'s thinking as reasoning_content for its openai-compat provider and take the next turn without it', async () => {
		const acct = await m.account()
		const ask = { content: '#call ls {}', role: 'user' }
		const body = (messages: Obj[]) => ({ ...chatBody(MODEL.anthropic, messages), max_tokens: 20000, reasoning_effort: 'medium' })
		const res = await post('/v1/chat/completions', openaiHeaders(acct), body([ask]))
		let reasoning = ''
		let call: Obj | undefined
		for await (const f of parseSse(res.body!)) {
			if (f.data === '[DONE]') continue
			const delta = JSON.parse(f.data).choices[0]?.delta ?? {}
			reasoning += delta.reasoning_content ?? ''
			call ??= delta.tool_calls?.[0]
		}
		expect(reasoning).toBe('Let me think about #call ls {}.')
		expect(lastRequest(m.mocks.anthropic).body.thinking.type).toBe('enabled')
		// fantasy keeps no thinking in its history: the tool-result turn comes back without it, and Claude still gets it.
		const replay = [ask, callTurn(call!.id, '{}'), { content: LISTING, tool_call_id: call!.id, role: 'tool' }]
		const second = await readChat(await post('/v1/chat/completions', openaiHeaders(acct), body(replay)))
		expect(second.text).toBe(`Tool results: ${LISTING}`)
		expect(lastRequest(m.mocks.anthropic).body.messages[1].content[0].type).toBe('thinking')
	})

	it('should stream a Claude call with arguments in fragments that join to its JSON', async () => {
		const acct = await m.account()
		const ask = { content: '#call view {"file_path":"/work/repo/README.md"}', role: 'user' }
		const turn = await readChat(await post('/v1/chat/completions', openaiHeaders(acct), chatBody(MODEL.anthropic, [ask])))
		expect(turn.calls.map((c) => [c.name, JSON.parse(c.input)])).toEqual([['view', { file_path: '/work/repo/README.md' }]])
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(5000)
	})
})

describe('Crush 0.96.1 through its openai provider: the Responses API for GPT-5', () => {
	it('should pass its body through and take back the replayed reasoning, call and output with store off', async () => {
		const acct = await m.account()
		const ask = { content: [{ text: '#call view {"file_path":"/work/repo/README.md"}', type: 'input_text' }], role: 'user' }
		const read = async (body: Obj) => {
			const res = await post('/v1/responses', openaiHeaders(acct), body)
			expect(res.status).toBe(200)
			const items: Obj[] = []
			let completed: Obj | undefined
			for await (const f of parseSse(res.body!)) {
				const ev = JSON.parse(f.data)
				expect([ev.type, 'error' in ev]).toEqual([f.event!, false])
				if (ev.type === 'response.output_item.done') items.push(ev.item)
				if (ev.type === 'response.completed') completed = ev.response
			}
			return { items, completed: completed! }
		}
		const body = responsesBody([ask])
		const first = await read(body)
		expect(lastRequest(m.mocks.openai).body).toEqual(body)
		const reasoning = first.items.find((i) => i.type === 'reasoning')!
		const call = first.items.find((i) => i.type === 'function_call')!
		expect(reasoning.encrypted_content).toBeString()
		expect([call.name, JSON.parse(call.arguments)]).toEqual(['view', { file_path: '/work/repo/README.md' }])
		// fantasy replays the reasoning by id with its summary texts and encrypted content, then the call and its output.
		const replay = [
			ask,
			{ id: reasoning.id, summary: reasoning.summary.map((s: Obj) => ({ text: s.text, type: 'summary_text' })), encrypted_content: reasoning.encrypted_content, type: 'reasoning' },
			{ arguments: call.arguments, call_id: call.call_id, name: call.name, type: 'function_call' },
			{ call_id: call.call_id, output: '<file>\n     1|# repo\n</file>\n', type: 'function_call_output' },
		]
		const second = await read(responsesBody(replay))
		expect(second.completed.status).toBe('completed')
		expect(second.items.find((i) => i.type === 'message')?.content[0].text).toStartWith('Tool results:')
		const [row] = (await usageRows(m, acct.accountId)).slice(-1)
		expect([row!.input_tokens, row!.output_tokens]).toEqual([second.completed.usage.input_tokens, second.completed.usage.output_tokens])
	})
})

describe('Crush 0.96.1 through its anthropic provider: /v1/messages', () => {
	it('should serve Claude with thinking, its cache marks and a tool loop as anthropic-sdk-go accumulates it', async () => {
		const acct = await m.account()
		const headers = anthropicHeaders(acct, 'interleaved-thinking-2025-05-14')
		const ask = userText('list the files here #call ls {}')
		const first = await readMessages(await post('/v1/messages', headers, messagesBody(MODEL.anthropic, [ask], 2000)))
		expect(first.stop).toBe('tool_use')
		const use = first.blocks.find((b) => b.type === 'tool_use')!
		expect([use.name, use.input]).toEqual(['ls', {}])
		const sent = lastRequest(m.mocks.anthropic)
		expect(sent.headers['anthropic-beta']).toContain('interleaved-thinking-2025-05-14')
		expect(sent.body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' })
		// fantasy's replay: thinking with its signature, the call, then the result as a list of text blocks.
		const assistant = { content: first.blocks.map((b) => (b.type === 'tool_use' ? { id: b.id, input: b.input, name: b.name, type: 'tool_use' } : b)), role: 'assistant' }
		const result = { content: [{ tool_use_id: use.id, content: [{ text: LISTING, type: 'text' }], cache_control: { type: 'ephemeral' }, type: 'tool_result' }], role: 'user' }
		// Only the last message keeps its cache mark.
		const history = [{ ...ask, content: [{ text: ask.content[0]!.text, type: 'text' }] }, assistant, result]
		const second = await readMessages(await post('/v1/messages', headers, messagesBody(MODEL.anthropic, history, 2000)))
		expect(second.stop).toBe('end_turn')
		expect(second.blocks.filter((b) => b.type === 'text').map((b) => b.text)).toEqual([`Tool results: ${LISTING}`])
		const [row] = (await usageRows(m, acct.accountId)).slice(-1)
		expect([row!.input_tokens, row!.output_tokens]).toEqual([second.usage.input_tokens, second.usage.output_tokens])
	})

	for (const up of ['openai', 'gemini'] as const)
		it(`should convert ${up}'s answer into the block order anthropic-sdk-go accumulates`, async () => {
			const acct = await m.account()
			const turn = await readMessages(await post('/v1/messages', anthropicHeaders(acct), messagesBody(MODEL[up], [userText('#call view {"file_path":"/work/repo/README.md"}')])))
			expect(turn.stop).toBe('tool_use')
			expect(turn.blocks.map((b) => [b.type, b.name, b.input])).toEqual([['tool_use', 'view', { file_path: '/work/repo/README.md' }]])
		})
})

describe('Crush 0.96.1: the errors it shows', () => {
	it('should refuse a model the key may not use and an empty balance in the shape each Go SDK reads', async () => {
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		const empty = await m.account(0)
		for (const [acct, status] of [[limited, 403], [empty, 402]] as const) {
			// openai-go reads `error.message` (fantasy shows it); anthropic-sdk-go reads the body `{type: "error", error: {type, message}}`.
			const chat = await post('/v1/chat/completions', openaiHeaders(acct), chatBody(MODEL.anthropic, [{ content: 'hi', role: 'user' }]))
			expect(chat.status).toBe(status)
			expect((await chat.json()).error.message).toBeString()
			const msgs = await post('/v1/messages', anthropicHeaders(acct), messagesBody(MODEL.anthropic, [userText('hi')]))
			expect(msgs.status).toBe(status)
			const body = await msgs.json()
			expect([body.type, typeof body.error.type, typeof body.error.message]).toEqual(['error', 'string', 'string'])
		}
	})
})
