/**
 * The benchmark scenarios, and the request each target gets for a scenario. Direct and bare-proxy targets get the
 * upstream's own protocol (what the gateway itself sends upstream), so their figures are the floor for the same
 * upstream work; the gateways get the client protocol of the scenario.
 * @module
 */
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
	return s
}

/** The scenarios selected by --scenario: a filter equal to a name selects that one, otherwise every name containing it. */
export function selectScenarios(o: Options): Scenario[] {
	const all = allScenarios(o)
	if (o.scenarios.length === 0) return all
	const names = new Set(all.map((s) => s.name))
	return all.filter((s) => o.scenarios.some((f) => (names.has(f) ? s.name === f : s.name.includes(f))))
}

function body(protocol: 'chat' | 'messages', model: string, stream: boolean, prompt: string, plain: boolean): string {
	const messages = [{ role: 'user', content: prompt }]
	if (protocol === 'messages') return JSON.stringify({ model, max_tokens: 256, stream, messages })
	// include_usage: OpenAI sends stream usage only when asked (platform.openai.com/docs/api-reference/chat/create).
	if (stream && !plain) return JSON.stringify({ model, max_tokens: 256, stream, stream_options: { include_usage: true }, messages })
	return JSON.stringify(stream ? { model, max_tokens: 256, stream, messages } : { model, max_tokens: 256, messages })
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
	return { port, path: protocol === 'chat' ? '/v1/chat/completions' : '/v1/messages', headers: headers(protocol, gateway ? keys.gateway : keys.upstream), body: body(protocol, model, s.stream, prompt, s.plain === true), expect }
}

/** The load for one measurement (or its warmup when `warmup`). */
export function loadFor(s: Scenario, request: RequestSpec, o: Options, warmup: boolean): LoadSpec {
	if (s.memory) return { request, mode: 'closed', concurrency: s.concurrency, maxRequests: s.concurrency, durationMs: 600_000, timeoutMs: 120_000 }
	// Warm-up keeps the concurrency but lasts --warmup; the memory scenario has none (its streams are the load).
	const durationMs = warmup ? o.warmupMs : o.durationMs
	return { request, mode: s.mode, concurrency: s.concurrency, rate: s.rate, durationMs, timeoutMs: 30_000 }
}
