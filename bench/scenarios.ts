/**
 * The benchmark scenarios, and the request each target gets for a scenario. Direct and bare-proxy targets get the
 * upstream's own protocol (what the gateway itself sends upstream), so their figures are the floor for the same
 * upstream work; the gateways get the client protocol of the scenario.
 * @module
 */
import { plan } from '../test/mocks'
import { readMessages } from '../test/mocks/anthropic/read'
import { readChat } from '../test/mocks/openai/chat-read'
import { MODELS } from './gateway'
import type { Options } from './options'
import type { Expect, LoadSpec, RequestSpec, TargetName } from './types'

export type Upstream = 'openai' | 'anthropic' | 'slow' | 'paced'

export type Scenario = {
	name: string
	description: string
	/** The gateway's client protocol. */
	client: 'chat' | 'messages'
	upstream: Upstream
	stream: boolean
	mode: 'closed' | 'open'
	concurrency: number
	rate?: number
	/** Memory scenario: one request per connection, RSS compared before, during and after. */
	memory?: boolean
	/** A chat stream whose client does not ask for usage (`stream_options.include_usage`), as the SDKs by default. */
	plain?: boolean
	/**
	 * The body of a coding agent's turn (~90 KB: system prompt, 20 tools, 30 tool-use round trips), as Claude Code or
	 * Codex send on every turn, instead of one short message: what a large body costs on the way in.
	 */
	agent?: boolean
}

/** Ports of every target, by upstream. */
export type Ports = { direct: Record<Upstream, number>; bare: Record<Upstream, number>; gateways: Partial<Record<TargetName, number>> }

// 'Hello! You said: <prompt>' comes back one word per chunk; the slow prompt sets how long slow streams last.
const PROMPT = 'Please say hello to the benchmark'
const SLOW_PROMPT = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen'
/** 100 words: answers of 104 content chunks, the length of a short paragraph of tokens. */
const LONG_PROMPT = Array.from({ length: 10 }, () => 'alpha bravo charlie delta echo foxtrot golf hotel india juliet').join(' ')

const promptOf = (s: Pick<Scenario, 'upstream'>) => (s.upstream === 'slow' ? SLOW_PROMPT : s.upstream === 'paced' ? LONG_PROMPT : PROMPT)

/**
 * What one request of the scenario costs on the gateway, micro-USD: the mock counts input = prompt words and
 * output = answer words (test/mocks/README.md), the bench prices are 1 and 2 micro-USD per token (gateway.ts).
 */
export function expectedCost(s: Scenario): number {
	if (s.agent) {
		// The mock's own reading of the body: input = the words of every input text, output = the answer's words.
		const body = JSON.parse(agentBody(s.upstream === 'anthropic' ? 'messages' : 'chat', 'm', true, PROMPT))
		const { usage } = plan(s.upstream === 'anthropic' ? readMessages(body) : readChat(body))
		return usage.input + 2 * usage.output
	}
	const words = promptOf(s).split(/\s+/).length
	return words + 2 * (words + 3)
}

/** Every scenario of a full run, in order. */
export function allScenarios(o: Options): Scenario[] {
	const s: Scenario[] = []
	for (const c of [1, 16, 64])
		s.push({ name: `chat-json-c${c}`, description: `chat non-stream, ${c} connections`, client: 'chat', upstream: 'openai', stream: false, mode: 'closed', concurrency: c })
	for (const c of [1, 16, 64])
		s.push({ name: `chat-sse-c${c}`, description: `chat stream, ${c} connections`, client: 'chat', upstream: 'openai', stream: true, mode: 'closed', concurrency: c })
	s.push({
		name: 'chat-sse-plain-c64',
		description: 'chat stream, 64 connections, the client not asking for usage (the SDKs\' default): the gateway asks upstream, bills, strips it',
		client: 'chat',
		upstream: 'openai',
		stream: true,
		mode: 'closed',
		concurrency: 64,
		plain: true,
	})
	s.push({
		name: 'chat-sse-long-c16',
		description: 'chat stream, 16 connections, answers of ~110 chunks arriving 1 ms apart (each a read of its own): the cost per chunk',
		client: 'chat',
		upstream: 'paced',
		stream: true,
		mode: 'closed',
		concurrency: 16,
	})
	for (const c of [1, 16]) {
		s.push({
			name: `messages-sse-conv-c${c}`,
			description: `messages stream, OpenAI upstream (conversion), ${c} connections`,
			client: 'messages',
			upstream: 'openai',
			stream: true,
			mode: 'closed',
			concurrency: c,
		})
		s.push({
			name: `messages-sse-fast-c${c}`,
			description: `messages stream, Anthropic upstream (fast path), ${c} connections`,
			client: 'messages',
			upstream: 'anthropic',
			stream: true,
			mode: 'closed',
			concurrency: c,
		})
	}
	s.push({
		name: `chat-sse-open-r${o.rate}`,
		description: `chat stream, open loop at ${o.rate}/s (latency from the scheduled send)`,
		client: 'chat',
		upstream: 'openai',
		stream: true,
		mode: 'open',
		concurrency: 1024,
		rate: o.rate,
	})
	s.push({
		name: `streams-${o.streams}`,
		description: `${o.streams} concurrent slow streams (memory)`,
		client: 'chat',
		upstream: 'slow',
		stream: true,
		mode: 'closed',
		concurrency: o.streams,
		memory: true,
	})
	// Last: their large bodies raise the heap, which would otherwise count in the peaks of the scenarios after them.
	for (const client of ['chat', 'messages'] as const)
		s.push({
			name: `${client}-agent-c16`,
			description: `${client} stream, 16 connections, a coding agent's ~90 KB body (fast path): the cost of a large body`,
			client,
			upstream: client === 'chat' ? 'openai' : 'anthropic',
			stream: true,
			mode: 'closed',
			concurrency: 16,
			agent: true,
		})
	return s
}

/** The scenarios selected by --scenario: a filter equal to a name selects that one, otherwise every name containing it. */
export function selectScenarios(o: Options): Scenario[] {
	const all = allScenarios(o)
	if (o.scenarios.length === 0) return all
	const names = new Set(all.map((s) => s.name))
	return all.filter((s) => o.scenarios.some((f) => (names.has(f) ? s.name === f : s.name.includes(f))))
}

function body(protocol: 'chat' | 'messages', model: string, stream: boolean, prompt: string, plain: boolean, agent = false): string {
	if (agent) return agentBody(protocol, model, stream, prompt)
	const messages = [{ role: 'user', content: prompt }]
	if (protocol === 'messages') return JSON.stringify({ model, max_tokens: 256, stream, messages })
	// include_usage: OpenAI sends stream usage only when asked (platform.openai.com/docs/api-reference/chat/create).
	if (stream && !plain) return JSON.stringify({ model, max_tokens: 256, stream, stream_options: { include_usage: true }, messages })
	return JSON.stringify(stream ? { model, max_tokens: 256, stream, messages } : { model, max_tokens: 256, messages })
}

const AGENT_TEXT = 'The build failed in src/relay/stream.ts at line 42: expected a string, got undefined; the test suite reports 3 failures. '
const AGENT_TURNS = 30

/**
 * A coding agent's turn: a long system prompt, 20 tools with JSON schemas, and 30 round trips of a short answer with a
 * tool call and its result, then the prompt. Chat bodies ask for usage, as the other chat streams do.
 */
function agentBody(protocol: 'chat' | 'messages', model: string, stream: boolean, prompt: string): string {
	const system = AGENT_TEXT.repeat(80)
	const schema = { type: 'object', properties: { path: { type: 'string', description: 'A file path' }, limit: { type: 'integer' } }, required: ['path'] }
	const tools = Array.from({ length: 20 }, (_, i) => ({ name: `tool_${i}`, description: AGENT_TEXT.repeat(4), schema }))
	const input = (i: number) => ({ path: `src/file${i}.ts`, limit: 200 })
	if (protocol === 'messages') {
		const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: AGENT_TEXT.repeat(10) }] }]
		for (let i = 0; i < AGENT_TURNS; i++) {
			messages.push({ role: 'assistant', content: [{ type: 'text', text: AGENT_TEXT.repeat(2) }, { type: 'tool_use', id: `toolu_${i}`, name: 'tool_3', input: input(i) }] })
			messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: AGENT_TEXT.repeat(14) }] })
		}
		messages.push({ role: 'assistant', content: [{ type: 'text', text: AGENT_TEXT }] }, { role: 'user', content: [{ type: 'text', text: prompt }] })
		return JSON.stringify({
			model,
			max_tokens: 256,
			stream,
			system: [{ type: 'text', text: system }],
			tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema })),
			messages,
		})
	}
	const messages: unknown[] = [
		{ role: 'system', content: system },
		{ role: 'user', content: AGENT_TEXT.repeat(10) },
	]
	for (let i = 0; i < AGENT_TURNS; i++) {
		messages.push({ role: 'assistant', content: AGENT_TEXT.repeat(2), tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'tool_3', arguments: JSON.stringify(input(i)) } }] })
		messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: AGENT_TEXT.repeat(14) })
	}
	messages.push({ role: 'assistant', content: AGENT_TEXT }, { role: 'user', content: prompt })
	return JSON.stringify({
		model,
		max_tokens: 256,
		stream,
		...(stream ? { stream_options: { include_usage: true } } : {}),
		tools: tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.schema } })),
		messages,
	})
}

function headers(protocol: 'chat' | 'messages', key: string): Record<string, string> {
	const h: Record<string, string> = { 'content-type': 'application/json' }
	if (protocol === 'chat') h.authorization = `Bearer ${key}`
	else {
		h['x-api-key'] = key
		h['anthropic-version'] = '2023-06-01'
	}
	return h
}

/** The request `target` gets in scenario `s`. */
export function requestFor(s: Scenario, target: TargetName, ports: Ports, keys: { upstream: string; gateway: string }): RequestSpec {
	const gateway = target === 'sb-pglite' || target === 'sb-postgres'
	const upstreamProtocol = s.upstream === 'anthropic' ? 'messages' : 'chat'
	const protocol = gateway ? s.client : upstreamProtocol
	const model = gateway ? MODELS[s.upstream] : s.upstream === 'anthropic' ? MODELS.anthropic : MODELS.openai
	const port = gateway ? ports.gateways[target] : ports[target as 'direct' | 'bare'][s.upstream]
	if (!port) throw new Error(`no port for target ${target}`)
	const expect: Expect = s.plain ? 'chat-sse-plain' : `${protocol}-${s.stream ? 'sse' : 'json'}`
	const prompt = promptOf(s)
	return { port, path: protocol === 'chat' ? '/v1/chat/completions' : '/v1/messages', headers: headers(protocol, gateway ? keys.gateway : keys.upstream), body: body(protocol, model, s.stream, prompt, s.plain === true, s.agent), expect }
}

/** The load for one measurement (or its warmup when `warmup`). */
export function loadFor(s: Scenario, request: RequestSpec, o: Options, warmup: boolean): LoadSpec {
	if (s.memory) return { request, mode: 'closed', concurrency: s.concurrency, maxRequests: s.concurrency, durationMs: 600_000, timeoutMs: 120_000 }
	// Warm-up keeps the concurrency but lasts --warmup; the memory scenario has none (its streams are the load).
	const durationMs = warmup ? o.warmupMs : o.durationMs
	return { request, mode: s.mode, concurrency: s.concurrency, rate: s.rate, durationMs, timeoutMs: 30_000 }
}
