/**
 * MCP for every model against real, independent Python MCP servers, replayed: fastmcp 4.0.10 and the official `mcp`
 * 2.3.0 SDK's MCPServer over Streamable HTTP (stateful SSE answers with a session id; stateless JSON answers behind a
 * bearer token), driven by the requests the Python clients send — anthropic 1.13.0
 * `client.beta.messages.create(..., mcp_servers=[…], tools=[{"type": "mcp_toolset", …}], betas=["mcp-client-2025-11-20"])`
 * (headers `x-api-key`, `anthropic-version: 2023-06-01`, `anthropic-beta`) and openai 3.22.1
 * `client.chat.completions.create(..., extra_body={"mcp_servers": […]})` and `client.responses.create(..., tools=[{"type":
 * "mcp", …}])`. The whole flow was first run by hand with the real Python servers and clients against the gateway and
 * the mocks (every model, streamed and not); the servers' wire answers were then captured with curl
 * (python-replay-server.ts), since CI has no Python.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GEMINI_3, type Matrix, PRICE, SETUP_MS, startMatrix } from '../protocols/harness'
import { FASTMCP_PLAN_TRIP, type ReplayServer, SDK_PLAN_TRIP, startReplayServer } from './python-replay-server'

const TOKEN = 'tok-py'
let m: Matrix
let fast: ReplayServer
let sdk: ReplayServer
let stateless: ReplayServer
beforeAll(async () => {
	fast = startReplayServer({ flavour: 'fastmcp', stateless: false })
	sdk = startReplayServer({ flavour: 'mcp-sdk', stateless: false })
	stateless = startReplayServer({ flavour: 'fastmcp', stateless: true, token: TOKEN })
	m = await startMatrix({
		env: { FETCH_ALLOW: '127.0.0.1' },
		channels: (mocks) => [{ name: 'ch-gemini-3', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [GEMINI_3], model_map: { [GEMINI_3]: 'gemini-3-pro-preview' } }],
		models: [{ name: GEMINI_3, input_per_mtok: 0.3, output_per_mtok: 2.5 }],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await Promise.all([fast.stop(), sdk.stop(), stateless.stop()])
})

const PRICES: Record<string, { input: number; output: number }> = { ...PRICE, [GEMINI_3]: { input: 0.3, output: 2.5 } }
const MODELS = ['gpt-m', 'gemini-m', GEMINI_3] as const
const vendorOf = (model: string) => (model === 'gpt-m' ? 'openai' : 'gemini') as 'openai' | 'gemini'

type Block = { type: string; [k: string]: any }

/** The anthropic SDK's beta messages request, as it goes on the wire; streams are read back to the final blocks. */
async function messages(key: string, body: Record<string, unknown>): Promise<{ status: number; content: Block[]; stop_reason?: string; raw: any }> {
	const r = await fetch(`${m.app.url}/v1/messages`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'mcp-client-2025-11-20' },
		body: JSON.stringify({ max_tokens: 1024, ...body }),
	})
	if (!body.stream) {
		const raw = (await r.json()) as any
		return { status: r.status, content: raw.content ?? [], stop_reason: raw.stop_reason, raw }
	}
	const content: Block[] = []
	const partial: string[] = []
	let stop: string | undefined
	for (const line of (await r.text()).split('\n')) {
		if (!line.startsWith('data: ')) continue
		const e = JSON.parse(line.slice(6))
		if (e.type === 'content_block_start') {
			content[e.index] = { ...e.content_block }
			partial[e.index] = ''
		} else if (e.type === 'content_block_delta') {
			if (e.delta.type === 'text_delta') content[e.index]!.text += e.delta.text
			if (e.delta.type === 'input_json_delta') partial[e.index] += e.delta.partial_json
		} else if (e.type === 'content_block_stop' && partial[e.index]) content[e.index]!.input = JSON.parse(partial[e.index]!)
		else if (e.type === 'message_delta') stop = e.delta.stop_reason
	}
	return { status: r.status, content, stop_reason: stop, raw: undefined }
}

const server = (url: string, token?: string) => ({ type: 'url', url, name: 'py', ...(token && { authorization_token: token }) })
const only = (...tools: string[]) => ({ type: 'mcp_toolset', mcp_server_name: 'py', default_config: { enabled: false }, configs: Object.fromEntries(tools.map((t) => [t, { enabled: true }])) })
const results = (content: Block[]) => content.filter((b) => b.type === 'mcp_tool_result').map((b) => ({ is_error: b.is_error, content: b.content }))
const uses = (content: Block[]) => content.filter((b) => b.type === 'mcp_tool_use').map((b) => ({ name: b.name, server_name: b.server_name, input: b.input }))

/** One usage row per model round (`req_x`, `req_x:r2`, …), each at the model's price, the balance down by their sum. */
async function expectBilled(acct: { accountId: number; balance: number }, model: string, rounds: number): Promise<void> {
	const r = await m.app.admin(`/api/usage?account_id=${acct.accountId}`)
	const rows = (r.body.data as Array<{ request_id: string; model: string; input_tokens: number; output_tokens: number; cost: number; end_reason: string }>).slice().reverse()
	expect(rows).toHaveLength(rounds)
	const id = rows[0]!.request_id
	expect(rows.map((x) => x.request_id)).toEqual(rows.map((_, i) => (i ? `${id}:r${i + 1}` : id)))
	let total = 0
	for (const x of rows) {
		expect(x).toMatchObject({ model, end_reason: 'ok' })
		const p = PRICES[model]!
		const micro = Number((BigInt(x.input_tokens) * BigInt(p.input * 1e6) + BigInt(x.output_tokens) * BigInt(p.output * 1e6) + 500_000n) / 1_000_000n)
		expect(Math.round(x.cost * 1e6)).toBe(micro)
		total += micro
	}
	expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - total)
}

for (const model of MODELS)
	describe(`fastmcp 4.0.10, stateful SSE (${model})`, () => {
		it('should offer the rich schema intact and hand the model’s arguments to the server unchanged', async () => {
			const acct = await m.account()
			const up = vendorOf(model)
			const from = m.mocks[up].requests.length
			fast.calls.length = 0
			// A forced call: the mock fills every argument from the schema (nested object, enum, optional, array).
			const a = await messages(acct.key, { model, messages: [{ role: 'user', content: 'plan it' }], mcp_servers: [server(fast.url)], tools: [only('plan_trip')], tool_choice: { type: 'any' } })
			expect(a.status).toBe(200)
			const args = { destination: 'plan it', travelers: { adults: 42, children: 42 }, mode: 'car', notes: 'plan it', tags: ['plan it'], budget: 42 }
			expect(uses(a.content)).toEqual([{ name: 'plan_trip', server_name: 'py', input: args }])
			expect(fast.calls).toEqual([{ name: 'plan_trip', args }])
			expect(results(a.content)).toEqual([{ is_error: false, content: [{ type: 'text', text: 'Trip to plan it by car for 42+42' }] }])
			expect(a.stop_reason).toBe('end_turn')
			const sent = m.mocks[up].requests[from]!.body as any
			if (up === 'openai') expect(sent.tools).toEqual([{ type: 'function', function: { name: 'mcp__py__plan_trip', description: 'Plan a trip', parameters: FASTMCP_PLAN_TRIP } }])
			else {
				const p = sent.tools[0].functionDeclarations[0].parameters
				expect(p.required).toEqual(['destination', 'travelers'])
				expect(p.properties.travelers).toEqual(FASTMCP_PLAN_TRIP.properties.travelers)
				expect(p.properties.mode).toEqual({ default: 'train', enum: ['car', 'train', 'plane'], type: 'string' })
				// Gemini's schema has no anyOf-with-null: an optional argument is nullable.
				expect(p.properties.notes).toEqual({ type: 'string', nullable: true, default: null })
			}
			await expectBilled(acct, model, 2)
		})

		for (const stream of [false, true])
			it(`should answer text + image, structured output, a raising tool and an empty result as the docs say${stream ? ', streamed' : ''}`, async () => {
				const acct = await m.account()
				const ask = (tools: string[]) => messages(acct.key, { model, messages: [{ role: 'user', content: '#tools go' }], mcp_servers: [server(fast.url)], tools: [only(...tools)], stream })
				const a = await ask(['snapshot', 'forecast'])
				expect(uses(a.content)).toEqual([
					{ name: 'snapshot', server_name: 'py', input: { city: 'Paris' } },
					{ name: 'forecast', server_name: 'py', input: { city: 'Tokyo' } },
				])
				// mcp_tool_result content is text blocks only: the image is named, not dropped in silence.
				expect(results(a.content)).toEqual([
					{ is_error: false, content: [{ type: 'text', text: 'Photo of Paris' }, { type: 'text', text: '[image image/png omitted]' }] },
					{ is_error: false, content: [{ type: 'text', text: '{"city":"Tokyo","temperature_c":21.5,"conditions":"sunny"}' }] },
				])
				const ids = a.content.filter((b) => b.type === 'mcp_tool_use').map((b) => b.id)
				expect(a.content.filter((b) => b.type === 'mcp_tool_result').map((b) => b.tool_use_id)).toEqual(ids)
				expect(a.content.at(-1)!.type).toBe('text')
				const b = await ask(['explode', 'nothing'])
				expect(results(b.content)).toEqual([
					{ is_error: true, content: [{ type: 'text', text: "Error calling tool 'explode': boom for Paris" }] },
					{ is_error: false, content: [] },
				])
				expect(b.stop_reason).toBe('end_turn')
			})

		it('should read a slow tool’s result after the log notifications fastmcp streams ahead of it', async () => {
			const acct = await m.account()
			const a = await messages(acct.key, { model, messages: [{ role: 'user', content: '#tools go' }], mcp_servers: [server(fast.url)], tools: [only('slow')], stream: true })
			expect(results(a.content)).toEqual([
				{ is_error: false, content: [{ type: 'text', text: 'Finally, Paris' }] },
				{ is_error: false, content: [{ type: 'text', text: 'Finally, Tokyo' }] },
			])
			await expectBilled(acct, model, 2)
		})
	})

describe('the mcp 2.3.0 SDK server ($defs and $ref in input schemas)', () => {
	for (const model of MODELS)
		it(`should give ${model} a schema it takes and the server the arguments as the model made them`, async () => {
			const acct = await m.account()
			const up = vendorOf(model)
			const from = m.mocks[up].requests.length
			sdk.calls.length = 0
			const a = await messages(acct.key, { model, messages: [{ role: 'user', content: 'plan it' }], mcp_servers: [server(sdk.url)], tools: [only('plan_trip')], tool_choice: { type: 'any' } })
			const args = { destination: 'plan it', travelers: { adults: 42, children: 42 }, mode: 'car', notes: 'plan it', tags: ['plan it'], budget: 42 }
			expect(sdk.calls).toEqual([{ name: 'plan_trip', args }])
			expect(results(a.content)).toEqual([{ is_error: false, content: [{ type: 'text', text: 'Trip to plan it by car for 42+42' }] }])
			const sent = m.mocks[up].requests[from]!.body as any
			if (up === 'openai') expect(sent.tools[0].function.parameters).toEqual({ ...SDK_PLAN_TRIP, type: 'object' })
			else {
				// Gemini's `parameters` has no references: the nested model is inlined.
				const p = sent.tools[0].functionDeclarations[0].parameters
				expect(JSON.stringify(p)).not.toContain('$ref')
				expect(p.properties.travelers).toMatchObject({ type: 'object', required: ['adults'], properties: { adults: { type: 'integer', minimum: 1 }, children: { type: 'integer', default: 0 } } })
			}
		})
})

describe('fastmcp 4.0.10, stateless JSON behind a bearer token, through chat completions', () => {
	for (const model of MODELS)
		it(`should send the token, keep no session and return message.mcp_calls (${model})`, async () => {
			const acct = await m.account()
			stateless.methods.length = 0
			const chat = (token?: string) =>
				fetch(`${m.app.url}/v1/chat/completions`, {
					method: 'POST',
					headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.key}` },
					body: JSON.stringify({ messages: [{ role: 'user', content: '#tools go' }], model, mcp_servers: [{ ...server(stateless.url, token), tool_configuration: { allowed_tools: ['forecast', 'explode'] } }] }),
				}).then((r) => r.json() as Promise<any>)
			const r = await chat(TOKEN)
			const msg = r.choices[0].message
			expect(msg.mcp_calls.map((c: any) => ({ name: c.name, arguments: JSON.parse(c.arguments), output: c.output, error: c.error }))).toEqual([
				{ name: 'explode', arguments: { city: 'Paris' }, output: null, error: "Error calling tool 'explode': boom for Paris" },
				{ name: 'forecast', arguments: { city: 'Tokyo' }, output: '{"city":"Tokyo","temperature_c":21.5,"conditions":"sunny"}', error: null },
			])
			expect(r.choices[0].finish_reason).toBe('stop')
			// No session id was given, so none is ended; the refused GET stream is not retried.
			expect(stateless.methods.filter((x) => x === 'DELETE')).toEqual([])
			expect(stateless.methods.filter((x) => x === 'GET').length).toBeLessThanOrEqual(1)
			await expectBilled(acct, model, 2)
			// Without the token the server answers 401: a failed call the caller can read, not a failed request.
			const denied = await chat()
			expect(denied.choices[0].message.mcp_calls).toHaveLength(1)
			expect(denied.choices[0].message.mcp_calls[0].error).toContain('invalid_token')
		})
})

describe('the Responses API’s own mcp tool (openai 3.22.1 `tools=[{"type": "mcp", …}]`)', () => {
	const tool = { type: 'mcp', server_label: 'py', server_url: 'http://127.0.0.1:8701/mcp', require_approval: 'never', allowed_tools: ['forecast'] }
	const responses = (key: string, model: string) =>
		fetch(`${m.app.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ input: '#tools go', model, tools: [tool] }) })

	it('should pass it to OpenAI untouched (OpenAI runs it)', async () => {
		const acct = await m.account()
		const from = m.mocks.openai.requests.length
		expect((await responses(acct.key, 'gpt-m')).status).toBe(200)
		const sent = m.mocks.openai.requests[from]!
		expect(sent.path).toBe('/v1/responses')
		expect((sent.body as any).tools).toEqual([tool])
	})

	for (const model of ['gemini-m', GEMINI_3, 'claude-m'])
		it(`should refuse it for ${model} with a 400 naming the tool`, async () => {
			const acct = await m.account()
			const r = await responses(acct.key, model)
			expect(r.status).toBe(400)
			expect(((await r.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param: 'tools[0]', code: 'unsupported_for_model' })
		})
})
