/**
 * A Bun server speaking what two Python MCP servers sent over Streamable HTTP, byte for byte where it matters:
 * fastmcp 4.0.10 (`http_app(path='/mcp')`: stateful, every answer as an SSE `event: message`, a progress and a log
 * notification ahead of a slow tool's result; with `stateless_http=True, json_response=True`: no session id, plain
 * JSON answers, GET refused 405) and the official `mcp` 2.3.0 SDK's MCPServer (its tools/list, whose nested models are
 * `$ref`s into `$defs`). The captures were made with curl against the real servers on 127.0.0.1 (initialize,
 * notifications/initialized, tools/list, each tools/call, DELETE), the same requests the gateway's MCP client sends.
 * CI has no Python, hence the replay.
 * @module
 */

export type Mode = { flavour: 'fastmcp' | 'mcp-sdk'; stateless: boolean; token?: string }

export type ReplayServer = { url: string; calls: Array<{ name: string; args: Record<string, unknown> }>; methods: string[]; stop(): Promise<void> }

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const CITY = { properties: { city: { type: 'string' } }, required: ['city'], type: 'object', additionalProperties: false }
const WRAP = { properties: { result: { type: 'string' } }, required: ['result'], type: 'object', 'x-fastmcp-wrap-result': true }
const FORECAST_OUT = {
	properties: { city: { type: 'string' }, temperature_c: { type: 'number' }, conditions: { enum: ['sunny', 'cloudy', 'rain'], type: 'string' } },
	required: ['city', 'temperature_c', 'conditions'],
	type: 'object',
}
const meta = { _meta: { fastmcp: { tags: [] } } }

/** fastmcp's `plan_trip` input schema (pydantic models inlined, optional arguments as anyOf with null, defaults). */
export const FASTMCP_PLAN_TRIP = {
	properties: {
		destination: { description: 'Where to', type: 'string' },
		travelers: {
			properties: { adults: { description: 'Adults', minimum: 1, type: 'integer' }, children: { default: 0, minimum: 0, type: 'integer' } },
			required: ['adults'],
			type: 'object',
		},
		mode: { default: 'train', enum: ['car', 'train', 'plane'], type: 'string' },
		notes: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
		tags: { default: [], items: { type: 'string' }, type: 'array' },
		budget: { anyOf: [{ type: 'number' }, { type: 'null' }], default: null },
	},
	required: ['destination', 'travelers'],
	type: 'object',
	additionalProperties: false,
}

/** The `mcp` SDK's `plan_trip` input schema: the nested model is a `$ref` into `$defs`, every property titled. */
export const SDK_PLAN_TRIP = {
	properties: {
		destination: { description: 'Where to', title: 'Destination', type: 'string' },
		travelers: { $ref: '#/$defs/Travelers' },
		mode: { default: 'train', enum: ['car', 'train', 'plane'], title: 'Mode', type: 'string' },
		notes: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Notes' },
		tags: { default: [], items: { type: 'string' }, title: 'Tags', type: 'array' },
		budget: { anyOf: [{ type: 'number' }, { type: 'null' }], default: null, title: 'Budget' },
	},
	required: ['destination', 'travelers'],
	type: 'object',
	$defs: {
		Travelers: {
			properties: { adults: { description: 'Adults', minimum: 1, title: 'Adults', type: 'integer' }, children: { default: 0, minimum: 0, title: 'Children', type: 'integer' } },
			required: ['adults'],
			title: 'Travelers',
			type: 'object',
		},
	},
	title: 'plan_tripArguments',
}

function tools(flavour: Mode['flavour']): unknown[] {
	if (flavour === 'mcp-sdk')
		return [{ description: 'Plan a trip', inputSchema: SDK_PLAN_TRIP, name: 'plan_trip', outputSchema: { properties: { result: { title: 'Result', type: 'string' } }, required: ['result'], type: 'object', title: 'plan_tripOutput' } }]
	return [
		{ ...meta, description: 'Plan a trip', inputSchema: FASTMCP_PLAN_TRIP, name: 'plan_trip', outputSchema: WRAP, title: 'Plan Trip' },
		{ ...meta, description: 'A photo of a city', inputSchema: CITY, name: 'snapshot', title: 'Snapshot' },
		{ ...meta, description: 'Always fails', inputSchema: CITY, name: 'explode', outputSchema: WRAP, title: 'Explode' },
		{ ...meta, description: 'Slow, reports progress', inputSchema: CITY, name: 'slow', outputSchema: WRAP, title: 'Slow' },
		{ ...meta, description: 'Weather forecast, structured', inputSchema: CITY, name: 'forecast', outputSchema: FORECAST_OUT, title: 'Forecast' },
		{ ...meta, description: 'Returns nothing', inputSchema: CITY, name: 'nothing', title: 'Nothing' },
	]
}

const INIT = {
	protocolVersion: '2025-11-25',
	capabilities: { logging: {}, prompts: { listChanged: true }, resources: { subscribe: false, listChanged: true }, tools: { listChanged: true } },
	serverInfo: { name: 'py-fastmcp', version: '4.0.10' },
}

type Args = Record<string, any>
const wrapped = (text: string) => ({ _meta: { fastmcp: { wrap_result: true } }, content: [{ text, type: 'text' }], isError: false, structuredContent: { result: text } })

/** The result of each tool as the Python server answered it; `notes` are the notifications sent before it. */
function answer(name: string, a: Args, flavour: Mode['flavour']): { result: unknown; notes?: unknown[] } {
	switch (name) {
		case 'plan_trip': {
			const text = `Trip to ${a.destination} by ${a.mode ?? 'train'} for ${a.travelers?.adults}+${a.travelers?.children ?? 0}`
			return { result: flavour === 'fastmcp' ? wrapped(text) : { content: [{ text, type: 'text' }], isError: false, structuredContent: { result: text } } }
		}
		case 'snapshot':
			return { result: { content: [{ text: `Photo of ${a.city}`, type: 'text' }, { data: PNG, mimeType: 'image/png', type: 'image' }], isError: false } }
		case 'explode':
			return { result: { content: [{ text: `Error calling tool 'explode': boom for ${a.city}`, type: 'text' }], isError: true } }
		case 'forecast': {
			const f = { city: a.city, temperature_c: 21.5, conditions: 'sunny' }
			return { result: { content: [{ text: JSON.stringify(f), type: 'text' }], isError: false, structuredContent: f } }
		}
		case 'nothing':
			return { result: { content: [], isError: false } }
		case 'slow':
			// fastmcp sends a log message on the request's stream even when the client set no level.
			return {
				result: wrapped(`Finally, ${a.city}`),
				notes: [0, 1, 2].map((i) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { msg: `working on ${a.city} ${i}`, extra: null } } })),
			}
		default:
			return { result: { content: [{ text: `Unknown tool: ${name}`, type: 'text' }], isError: true } }
	}
}

const sse = (msgs: unknown[]) => msgs.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join('')

export function startReplayServer(mode: Mode): ReplayServer {
	const sessions = new Set<string>()
	const rec: ReplayServer = { url: '', calls: [], methods: [], stop: async () => server.stop(true) }
	const server = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		async fetch(req) {
			if (mode.token && req.headers.get('authorization') !== `Bearer ${mode.token}`)
				return new Response('{"error":"invalid_token"}', { status: 401, headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer' } })
			const sid = req.headers.get('mcp-session-id')
			rec.methods.push(req.method)
			if (req.method === 'GET') return new Response('Method Not Allowed', { status: 405, headers: { allow: 'DELETE, POST' } })
			if (req.method === 'DELETE') {
				if (sid) sessions.delete(sid)
				return new Response(null, { status: 200 })
			}
			const msg = (await req.json()) as { id?: number; method: string; params?: Args }
			rec.methods.push(msg.method)
			let headers: Record<string, string> = {}
			if (!mode.stateless) {
				if (msg.method === 'initialize') {
					const id = crypto.randomUUID().replaceAll('-', '')
					sessions.add(id)
					headers = { 'mcp-session-id': id }
				} else if (!sid || !sessions.has(sid))
					return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad Request: Missing session ID' } }, { status: 400 })
				else headers = { 'mcp-session-id': sid }
			}
			if (msg.id === undefined) return new Response(null, { status: 202, headers: { 'content-type': 'application/json', ...headers } })
			let out: { result: unknown; notes?: unknown[] }
			if (msg.method === 'initialize') out = { result: INIT }
			else if (msg.method === 'tools/list') out = { result: { tools: tools(mode.flavour) } }
			else if (msg.method === 'tools/call') {
				const { name, arguments: args = {} } = msg.params as { name: string; arguments?: Args }
				rec.calls.push({ name, args })
				out = answer(name, args, mode.flavour)
			} else out = { result: {} }
			const reply = { jsonrpc: '2.0', id: msg.id, result: out.result }
			if (mode.stateless) return Response.json(reply, { headers })
			const body = sse([...(out.notes ?? []), reply])
			return new Response(body, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', ...headers } })
		},
	})
	rec.url = `http://127.0.0.1:${server.port}/mcp`
	return rec
}
