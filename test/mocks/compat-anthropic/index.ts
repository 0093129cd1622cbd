/**
 * Mock Anthropic-compatible vendors (POST /v1/messages), one per documented deviation from Anthropic's own API.
 * The upstream model name picks the vendor profile, so one server backs several channels. Each profile is written
 * from the vendor's published format or a public bug report about it (cited per profile), not from `src/`.
 *
 * Every profile answers the same thing so tests can compare: text `Compat answer here` (3 words), an optional
 * thinking block `Pondering the question.` when the request enables thinking, or two tool calls (get_weather
 * {city:"Paris"} and {city:"Tokyo"}) when the last user text contains `#tools` and tools are offered. Usage is
 * fixed: `INPUT` fresh input tokens, `CACHE_READ` cache reads (profiles that report them), `OUTPUT` output tokens.
 * @module
 */

import { frame, json, sse, type Reply } from '../shared/reply'
import { startMockServer, type MockRequest } from '../shared/server'
import type { MockOptions, VendorMock } from '../shared/types'

export const INPUT = 12
export const CACHE_READ = 4
export const OUTPUT = 7
export const ANSWER = 'Compat answer here'
export const THOUGHT = 'Pondering the question.'
export const CALLS = [
	{ name: 'get_weather', input: { city: 'Paris' } },
	{ name: 'get_weather', input: { city: 'Tokyo' } },
]

/**
 * The profiles, by upstream model name:
 * - `glm-4.6` (Zhipu GLM, open.bigmodel.cn/api/anthropic): `message_start.usage` is `{input_tokens:0,output_tokens:0}`;
 *   the real input and cache reads arrive only in the final `message_delta` (zai-org/GLM-5#139).
 * - `deepseek-v4-flash` (api.deepseek.com/anthropic): thinking blocks with an empty `signature` and no
 *   `signature_delta`; no `cache_creation_input_tokens` at all; `message_delta.usage` has only `output_tokens`
 *   (api-docs.deepseek.com/guides/anthropic_api: thinking "Supported (budget_tokens is ignored)"). Thinking is on
 *   unless `thinking.type` is `disabled`, and with it on, an assistant turn that called tools must come back with
 *   its thinking, else 400 (api-docs.deepseek.com/guides/thinking_mode: "Thinking mode is enabled by default";
 *   for tool-call turns the reasoning "must be fully passed back ... the API will return a 400 error").
 * - `kimi-k2` (Moonshot): `null` for every absent field (`cache_*_input_tokens`, `stop_sequence`, `service_tier`),
 *   tool_use `input` sent whole in `content_block_start` with no `input_json_delta`, and `input_tokens` repeated
 *   (cumulatively) in `message_delta.usage`.
 * - `bedrock-claude` (Amazon Bedrock InvokeModelWithResponseStream and gateways relaying it): an extra
 *   `amazon-bedrock-invocationMetrics` object in `message_stop` repeating the counts under other names.
 * - `dashscope-qwen` (Alibaba DashScope, Anthropic-compatible mode): cache reads only in `message_delta`, next to
 *   an OpenAI-style `prompt_tokens_details` (jeremychone/rust-genai#258). This profile also sends a `ping` and an
 *   event type Anthropic does not define before `message_start`: Anthropic's streaming docs warn that new event
 *   types may be added and must be handled gracefully, and relays add their own.
 * - `cut-after-delta`: the body ends after `message_delta` (stop_reason given) without `message_stop`, as relays
 *   that drop the last frame do.
 * - `glm-error`: after some text, an `error` event whose `error` has GLM's numeric `code` and no `type`.
 * - `relay-zero-delta` (gateways relaying Bedrock or Vertex Claude): the real counts in `message_start`, then
 *   `input_tokens: 0` and `cache_read_input_tokens: 0` placeholders next to the output count in `message_delta`
 *   (envoyproxy/ai-gateway#1631, farion1231/cc-switch#6655).
 */
export type Profile = 'glm-4.6' | 'deepseek-v4-flash' | 'kimi-k2' | 'bedrock-claude' | 'dashscope-qwen' | 'cut-after-delta' | 'glm-error' | 'relay-zero-delta'
export const PROFILES: Profile[] = ['glm-4.6', 'deepseek-v4-flash', 'kimi-k2', 'bedrock-claude', 'dashscope-qwen', 'cut-after-delta', 'glm-error', 'relay-zero-delta']

type Body = { model?: unknown; stream?: unknown; messages?: unknown; tools?: unknown; thinking?: { type?: string } }
type Block = Record<string, unknown>

const lastUserText = (b: Body): string => {
	const msgs = Array.isArray(b.messages) ? (b.messages as Array<{ role: string; content: unknown }>) : []
	const last = [...msgs].reverse().find((m) => m.role === 'user')
	if (!last) return ''
	if (typeof last.content === 'string') return last.content
	return (last.content as Block[]).map((c) => (c.type === 'text' ? String(c.text) : '')).join(' ')
}

/** Anthropic's own error body, as these vendors answer a refused request. */
const invalid = (message: string) => json({ type: 'error', error: { type: 'invalid_request_error', message } }, 400)

/**
 * The checks these vendors document on replayed history: a thinking block must have text, and tool_use blocks need
 * their results in the next user turn (the same rule as Anthropic). They do not verify signatures.
 */
function validate(profile: Profile, b: Body): Reply | undefined {
	const msgs = Array.isArray(b.messages) ? (b.messages as Array<{ role: string; content: unknown }>) : []
	for (const [i, m] of msgs.entries()) {
		if (!Array.isArray(m.content)) continue
		const blocks = m.content as Block[]
		if (profile === 'deepseek-v4-flash' && thinkingOn(profile, b) && m.role === 'assistant' && blocks.some((c) => c.type === 'tool_use') && !blocks.some((c) => c.type === 'thinking'))
			return invalid('The reasoning_content in the thinking mode must be passed back to the API.')
		for (const c of m.content as Block[]) {
			if (c.type === 'thinking' && typeof c.thinking !== 'string') return invalid(`messages.${i}.content: thinking.thinking: Field required`)
			if (c.type === 'tool_use') {
				const next = msgs[i + 1]
				const ok = next && Array.isArray(next.content) && (next.content as Block[]).some((r) => r.type === 'tool_result' && r.tool_use_id === c.id)
				if (!ok) return invalid(`messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${String(c.id)}`)
			}
		}
	}
	return undefined
}

type Plan = { thinking: boolean; tools: boolean }

/** DeepSeek thinks unless told not to; the others only when asked. */
const thinkingOn = (profile: Profile, b: Body) => (profile === 'deepseek-v4-flash' ? b.thinking?.type !== 'disabled' : b.thinking?.type === 'enabled')

const planOf = (profile: Profile, b: Body): Plan => ({
	thinking: thinkingOn(profile, b),
	tools: Array.isArray(b.tools) && b.tools.length > 0 && lastUserText(b).includes('#tools'),
})

/** The whole `Message` for a non-stream call, with the profile's field quirks. */
function message(profile: Profile, model: string, p: Plan): Reply {
	if (profile === 'glm-error') return json({ error: { code: '1301', message: 'System detected potentially unsafe content' } }, 400)
	const content: Block[] = []
	if (p.thinking) content.push(profile === 'deepseek-v4-flash' ? { type: 'thinking', thinking: THOUGHT, signature: '' } : { type: 'thinking', thinking: THOUGHT })
	if (p.tools) CALLS.forEach((c, i) => content.push({ type: 'tool_use', id: `call_${i}`, name: c.name, input: c.input }))
	else content.push({ type: 'text', text: ANSWER })
	const usage: Block =
		profile === 'kimi-k2'
			? { input_tokens: INPUT, output_tokens: OUTPUT, cache_creation_input_tokens: null, cache_read_input_tokens: null, service_tier: null }
			: profile === 'deepseek-v4-flash'
				? { input_tokens: INPUT, output_tokens: OUTPUT, cache_read_input_tokens: CACHE_READ }
				: { input_tokens: INPUT, output_tokens: OUTPUT, cache_creation_input_tokens: 0, cache_read_input_tokens: CACHE_READ }
	return json({ id: 'msg_compat', type: 'message', role: 'assistant', model, content, stop_reason: p.tools ? 'tool_use' : 'end_turn', stop_sequence: null, usage })
}

/** The SSE body for a stream call. */
function stream(profile: Profile, model: string, p: Plan): Reply {
	const f: string[] = []
	const ev = (data: Block) => f.push(frame(data, String(data.type)))
	if (profile === 'dashscope-qwen') {
		ev({ type: 'ping' })
		ev({ type: 'vendor_metadata', request_id: 'req-1' })
	}
	const startUsage: Block =
		profile === 'glm-4.6'
			? { input_tokens: 0, output_tokens: 0 }
			: profile === 'kimi-k2'
				? { input_tokens: INPUT, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null, service_tier: null }
				: profile === 'deepseek-v4-flash'
					? { input_tokens: INPUT, output_tokens: 0, cache_read_input_tokens: CACHE_READ }
					: profile === 'dashscope-qwen'
						? { input_tokens: INPUT, output_tokens: 0 }
						: { input_tokens: INPUT, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: CACHE_READ }
	ev({ type: 'message_start', message: { id: 'msg_compat', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } })
	let index = 0
	if (p.thinking) {
		// DeepSeek: an empty signature at the start and no signature_delta; others: no signature field at all.
		ev({ type: 'content_block_start', index, content_block: profile === 'deepseek-v4-flash' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'thinking', thinking: '' } })
		ev({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: THOUGHT } })
		ev({ type: 'content_block_stop', index })
		index++
	}
	if (p.tools) {
		for (const [i, c] of CALLS.entries()) {
			if (profile === 'kimi-k2') ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: `call_${i}`, name: c.name, input: c.input } })
			else {
				ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: `call_${i}`, name: c.name, input: {} } })
				ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(c.input) } })
			}
			ev({ type: 'content_block_stop', index })
			index++
		}
	} else {
		ev({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
		const words = ANSWER.split(' ')
		words.forEach((w, i) => ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: i < words.length - 1 ? `${w} ` : w } }))
		if (profile === 'glm-error') {
			ev({ type: 'error', error: { code: '1301', message: 'System detected potentially unsafe content' } })
			return sse(f, 0)
		}
		ev({ type: 'content_block_stop', index })
	}
	const deltaUsage: Block =
		profile === 'glm-4.6'
			? { input_tokens: INPUT, output_tokens: OUTPUT, cache_read_input_tokens: CACHE_READ }
			: profile === 'kimi-k2'
				? { input_tokens: INPUT, output_tokens: OUTPUT, cache_creation_input_tokens: null, cache_read_input_tokens: null }
				: profile === 'dashscope-qwen'
					? { cache_creation_input_tokens: 0, cache_read_input_tokens: CACHE_READ, prompt_tokens_details: { cached_tokens: CACHE_READ }, output_tokens: OUTPUT }
					: profile === 'relay-zero-delta'
						? { input_tokens: 0, cache_read_input_tokens: 0, output_tokens: OUTPUT }
						: { output_tokens: OUTPUT }
	ev({ type: 'message_delta', delta: { stop_reason: p.tools ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: deltaUsage })
	if (profile === 'cut-after-delta') return sse(f, 0)
	if (profile === 'bedrock-claude')
		ev({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: INPUT + CACHE_READ, outputTokenCount: OUTPUT, invocationLatency: 812, firstByteLatency: 301 } })
	else ev({ type: 'message_stop' })
	return sse(f, 1)
}

function route(req: MockRequest, opts: MockOptions): Reply {
	if (req.headers.get('x-api-key') !== opts.apiKey) return json({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }, 401)
	if (req.method !== 'POST' || req.path !== '/v1/messages') return json({ type: 'error', error: { type: 'not_found_error', message: 'Not Found' } }, 404)
	const b = (req.body ?? {}) as Body
	const model = String(b.model)
	if (!PROFILES.includes(model as Profile)) return invalid(`unknown model ${model}`)
	const bad = validate(model as Profile, b)
	if (bad) return bad
	const p = planOf(model as Profile, b)
	return b.stream === true ? stream(model as Profile, model, p) : message(model as Profile, model, p)
}

/** Starts the mock on a free port; `url` is the bare origin (a channel's `base_url`, without /v1). */
export function startCompatAnthropicMock(opts: MockOptions): VendorMock {
	return startMockServer(
		{
			basePath: '',
			handle: (req) => route(req, opts),
			statusBody: (status) => ({ type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message: `HTTP ${status}` } }),
			streamError: (_req, _seq, status = 529) => ({ frame: frame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'), status }),
		},
		opts,
	)
}
