/**
 * Codex CLI's client-run tool search (`{type: "tool_search", execution: "client"}`, codex-shape.ts) over
 * `/v1/responses` with the official `openai` SDK, on a Claude and a Gemini model (converted) and a GPT model (verbatim):
 * the search offered as a function, the vendor's call of it given back as a `tool_search_call` item (streamed as
 * OpenAI streams one: its item events only), the replayed call and `tool_search_output` sent as a call and its result,
 * the tools that output loaded (a deferred function, an MCP server's namespace) offered upstream from then on and their calls given
 * back as the CLI's own (namespace split back), and a search run by OpenAI refused with a 400 naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { ResponseStreamEvent } from 'openai/resources/responses/responses'
import { CODEX_CLI_TOOLS, CODEX_HEADERS, CODEX_LOADED_MCP, CODEX_TOOL_SEARCH, cliMessage, cliPrefix, codexCliBody, codexCliReplay, codexSearchOutput } from './codex-shape'
import { type Account, label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'
import { checkResponsesEvents } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Response = OpenAI.Responses.Response
type Item = Record<string, unknown>

const TOOLS = [...CODEX_CLI_TOOLS, CODEX_TOOL_SEARCH]

/** What a search of the CLI loads: a deferred app function (as in codex-rs's own tests) and an MCP server's namespace (recorded). */
const LOADED = [
	{ type: 'function', name: 'mcp__codex_apps__calendar_create_event', description: 'Create a calendar event.', defer_loading: true, parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false } },
	CODEX_LOADED_MCP,
]
const LOADED_NAMES = ['mcp__codex_apps__calendar_create_event', 'mcp__cal__create_event', 'mcp__cal__list_events']

const codexClient = (acct: Account) => new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, defaultHeaders: CODEX_HEADERS })

/** One Codex turn, streamed through the SDK's stream helper (events checked and returned) or not. */
async function turn(client: OpenAI, model: string, input: Item[], stream: boolean): Promise<{ r: Response; events: ResponseStreamEvent[] }> {
	const { stream: _, ...params } = { ...codexCliBody(model, input), tools: TOOLS }
	if (!stream) return { r: await client.responses.create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming), events: [] }
	const s = client.responses.stream(params as OpenAI.Responses.ResponseCreateParamsStreaming)
	const events: ResponseStreamEvent[] = []
	s.on('event', (e) => events.push(e))
	const r = await s.finalResponse()
	checkResponsesEvents(events, { oneAtATime: true, final: r })
	return { r, events }
}

/** The function names the vendor was offered. */
function offered(up: Upstream): string[] {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'anthropic') return body.tools.flatMap((t: { name?: string; input_schema?: unknown }) => (t.input_schema ? [t.name] : []))
	return body.tools.flatMap((t: { functionDeclarations?: Array<{ name: string }> }) => (t.functionDeclarations ?? []).map((f) => f.name))
}

/** The vendor's declaration of a function by name. */
function declaration(up: Upstream, name: string): Record<string, any> {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'anthropic') return body.tools.find((t: { name: string }) => t.name === name)
	return body.tools.flatMap((t: { functionDeclarations?: unknown[] }) => t.functionDeclarations ?? []).find((f: { name: string }) => f.name === name)
}

describe('Codex tool search on a converted model', () => {
	for (const up of ['anthropic', 'gemini'] as Upstream[])
		for (const stream of [false, true])
			it(`should run search → output → call of a loaded tool (${label(up, stream)})`, async () => {
				const client = codexClient(await m.account())

				// Turn 1: the model searches; the search went upstream as a function of the CLI's schema.
				const input1 = [...cliPrefix(), cliMessage('user', '#call tool_search {"query":"calendar create","limit":2}', 4)]
				const first = await turn(client, MODEL[up], input1, stream)
				const searches = first.r.output.filter((o) => o.type === 'tool_search_call')
				expect(searches).toHaveLength(1)
				const search = searches[0] as OpenAI.Responses.ResponseToolSearchCall
				expect(search).toMatchObject({ type: 'tool_search_call', execution: 'client', status: 'completed', arguments: { query: 'calendar create', limit: 2 } })
				expect(typeof search.call_id).toBe('string')
				expect(first.r.output.some((o) => o.type === 'function_call')).toBe(false)
				expect(offered(up)).toContain('tool_search')
				expect(offered(up)).not.toContain(LOADED_NAMES[0])
				expect(declaration(up, 'tool_search').description).toBe(CODEX_TOOL_SEARCH.description)
				if (up === 'anthropic') expect(declaration(up, 'tool_search').input_schema).toEqual(CODEX_TOOL_SEARCH.parameters)
				if (stream) {
					// As OpenAI streams the item: added and done, no arguments events.
					const ofSearch = first.events.filter((e) => ('item' in e && (e.item as { type?: string }).type === 'tool_search_call') || ('item_id' in e && e.item_id === search.id))
					expect(ofSearch.map((e) => e.type)).toEqual(['response.output_item.added', 'response.output_item.done'])
					expect(first.events.some((e) => e.type === 'response.function_call_arguments.delta')).toBe(false)
				}

				// Turn 2: the CLI replays the call and the output of its search; the loaded tools are offered from now on.
				const input2 = [...input1, ...codexCliReplay(first.r.output), codexSearchOutput(search.call_id!, LOADED)]
				const second = await turn(client, MODEL[up], input2, stream)
				expect(second.r.output_text).toStartWith('Tool results: ')
				expect(second.r.output_text).toContain('mcp__codex_apps__calendar_create_event')
				expect(offered(up)).toEqual(expect.arrayContaining(['tool_search', ...LOADED_NAMES]))
				const sent2 = lastRequest(m.mocks[up]).body
				if (up === 'anthropic') {
					const assistant = sent2.messages.findLast((x: { role: string }) => x.role === 'assistant')
					const use = assistant.content.find((b: { type: string }) => b.type === 'tool_use')
					expect(use).toMatchObject({ name: 'tool_search', input: { query: 'calendar create', limit: 2 } })
					const result = sent2.messages.at(-1).content[0]
					expect(result).toMatchObject({ type: 'tool_result', tool_use_id: use.id })
					expect(JSON.stringify(result.content)).toContain('mcp__cal')
				} else {
					const parts = sent2.contents.flatMap((c: { parts: unknown[] }) => c.parts)
					expect(parts.find((p: { functionCall?: unknown }) => p.functionCall).functionCall).toMatchObject({ name: 'tool_search', args: { query: 'calendar create', limit: 2 } })
					expect(parts.find((p: { functionResponse?: unknown }) => p.functionResponse).functionResponse.name).toBe('tool_search')
				}

				// Turn 3: a call of a function the search loaded inside a namespace comes back split, as the CLI runs it.
				const input3 = [...input2, ...codexCliReplay(second.r.output), cliMessage('user', '#call mcp__cal__create_event {"title":"Standup"}', 5)]
				const third = await turn(client, MODEL[up], input3, stream)
				const calls = third.r.output.filter((o) => o.type === 'function_call')
				expect(calls.map((c) => [c.namespace, c.name, JSON.parse(c.arguments)])).toEqual([['mcp__cal', 'create_event', { title: 'Standup' }]])
				expect(offered(up)).toEqual(expect.arrayContaining(LOADED_NAMES))

				// Turn 4: its output.
				const fourth = await turn(client, MODEL[up], [...input3, ...codexCliReplay(third.r.output, { [calls[0]!.call_id]: 'created' })], stream)
				expect(fourth.r.output_text).toBe('Tool results: created')
			})
})

describe('A deferred function beside a client-run search', () => {
	const deferred = { ...LOADED[0], type: 'function' as const }
	for (const up of ['anthropic', 'gemini'] as Upstream[])
		it(`should reach ${up} only once a search loaded it`, async () => {
			const client = codexClient(await m.account())
			const tools = [CODEX_TOOL_SEARCH, deferred] as unknown as OpenAI.Responses.Tool[]
			const ask = [cliMessage('user', 'book the standup', 1)]
			await client.responses.create({ model: MODEL[up], input: ask as unknown as OpenAI.Responses.ResponseInput, tools })
			expect(offered(up)).toEqual(['tool_search'])
			const searched = [...ask, { type: 'tool_search_call', call_id: 'call_s1', status: 'completed', execution: 'client', arguments: { query: 'calendar' } }, codexSearchOutput('call_s1', [deferred])]
			await client.responses.create({ model: MODEL[up], input: searched as unknown as OpenAI.Responses.ResponseInput, tools })
			expect(offered(up)).toEqual(['tool_search', deferred.name])
		})
})

describe('tool_choice naming the client-run search', () => {
	for (const up of ['anthropic', 'gemini'] as Upstream[])
		it(`should force the client-run search on ${up} when tool_choice names it`, async () => {
			const acct = await m.account()
			// Without reasoning: Claude takes no forced tool choice with thinking on (the encoder makes it auto then).
			const { reasoning: _, ...codex } = codexCliBody(MODEL[up], [cliMessage('user', 'find the calendar tools', 1)]) as unknown as Record<string, unknown>
			const body = { ...codex, tools: TOOLS, tool_choice: { type: 'tool_search' }, stream: false }
			const r = await codexClient(acct).responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming)
			const sent = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') expect(sent.tool_choice).toMatchObject({ type: 'tool', name: 'tool_search' })
			else expect(sent.toolConfig.functionCallingConfig).toMatchObject({ mode: 'ANY', allowedFunctionNames: ['tool_search'] })
			expect(r.output.filter((o) => o.type === 'tool_search_call')).toHaveLength(1)
			expect(r.output.some((o) => o.type === 'function_call')).toBe(false)
		})
})

describe('Tool search run by OpenAI', () => {
	const serverSearch = { type: 'tool_search' }
	for (const up of ['anthropic', 'gemini'] as Upstream[])
		it(`should be refused for ${up} with a 400 naming it, before any upstream call`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const body = { ...codexCliBody(MODEL[up], [cliMessage('user', 'hi', 1)]), tools: [...CODEX_CLI_TOOLS, serverSearch], stream: false } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming
			const err = await codexClient(acct).responses.create(body).then(() => undefined, (e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			const says = `tools[${CODEX_CLI_TOOLS.length}] of type 'tool_search' with execution 'server' is run by OpenAI: set execution 'client' and run the search yourself for this model`
			expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({ message: `${says} (model "${MODEL[up]}")`, type: 'invalid_request_error', param: `tools[${CODEX_CLI_TOOLS.length}]`, code: 'unsupported_for_model' })
			expect(m.mocks[up].requests.length).toBe(before)
		})

	it('should forward a client-run search and its replayed items verbatim to a GPT model', async () => {
		const acct = await m.account()
		const input = [cliMessage('user', 'hi', 1), { type: 'tool_search_call', id: 'tsc_1', call_id: 'call_s1', status: 'completed', execution: 'client', arguments: { query: 'calendar' } }, codexSearchOutput('call_s1', LOADED)]
		const body = { ...codexCliBody(MODEL.openai, input), tools: TOOLS, stream: false } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming
		await codexClient(acct).responses.create(body)
		expect(lastRequest(m.mocks.openai).body).toEqual({ ...body, model: 'gpt-4o-mini' })
	})
})
