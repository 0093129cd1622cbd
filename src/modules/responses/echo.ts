/**
 * The request fields a Response object echoes (https://platform.openai.com/docs/api-reference/responses/object):
 * OpenAI returns the `instructions`, `text.format`, `tools`, `tool_choice`, `reasoning`, sampling settings,
 * `max_tool_calls` and `metadata` the request set, and `store`. The codec alone fills neutral defaults (it sees only the answer), so a converted answer
 * said `text.format: {type: 'text'}` to a request for a JSON schema; this puts the request's values back, on the body
 * and on the `response` of the stream's lifecycle events.
 * @module
 */
import type { ProtocolCodec } from '../../protocols/codec'
import { tappedCodec } from './codec-tap'
import { isObject } from '../../core/json'

const ECHOED = [
	'instructions',
	'max_output_tokens',
	'max_tool_calls',
	'temperature',
	'top_p',
	'parallel_tool_calls',
	'tool_choice',
	'tools',
	'metadata',
	'user',
	'truncation',
	'safety_identifier',
	'prompt_cache_key',
] as const

/** The echo fields of a request body, as the Response object carries them (absent ones keep the codec's defaults). */
export function echoOf(body: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {}
	for (const k of ECHOED) if (body[k] !== undefined && body[k] !== null) out[k] = body[k]
	// `text` is echoed with its `verbosity` (Codex sends `text: {verbosity}` alone), the format defaulting as OpenAI's does.
	if (isObject(body.text)) out.text = { ...body.text, format: isObject(body.text.format) ? body.text.format : { type: 'text' } }
	if (isObject(body.reasoning)) out.reasoning = { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null }
	// The gateway keeps a converted answer unless asked not to (converted-items.ts), as OpenAI does: say so.
	out.store = body.store !== false
	return out
}

/** Lifecycle events whose `response` is a whole Response object. */
const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed'])

/** The Responses codec with the request's echo fields set on every Response object it encodes. */
export function echoingCodec<C extends ProtocolCodec>(codec: C, echo: Record<string, unknown>): C {
	if (!Object.keys(echo).length) return codec
	return tappedCodec(codec, {
		body: (body) => ({ ...body, ...echo }),
		frame(f) {
			if (!f.event || !LIFECYCLE.has(f.event)) return f
			const e = JSON.parse(f.data) as { response?: Record<string, unknown> }
			if (!isObject(e.response)) return f
			e.response = { ...e.response, ...echo }
			return { ...f, data: JSON.stringify(e) }
		},
	})
}
