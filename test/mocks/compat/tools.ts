/**
 * Tool calls and finish reasons of OpenAI-compatible vendors as their docs and bug reports show them: Ollama's
 * reused `index: 0` and missing `index`, Mistral's 9-character ids sent whole with `finish_reason` and usage in one
 * chunk and its `model_length` / `error` finish reasons, and arguments sent as an object.
 * @module
 */
import { chunk, completion, data, DONE, type Scenario, usageChunk } from './chunks'

export const PARIS = { city: 'Paris' }
export const TOKYO = { city: 'Tokyo' }
export const TWO_CALLS_USAGE = { prompt_tokens: 60, completion_tokens: 16, total_tokens: 76 }

/**
 * Ollama (ollama/ollama#15457: "tool_calls index is always 0 for multiple tool calls"): each call whole in its own
 * chunk, both `index: 0`, told apart only by `id`. With `withIndex` false the field is missing altogether
 * (ollama/ollama#7881, Ollama < 0.4.7; the Gemini OpenAI-compatible endpoint does the same).
 */
function twoCalls(model: string, withIndex: boolean): Scenario {
	const id = 'chatcmpl-420'
	const call = (callId: string, args: unknown) => ({ id: callId, ...(withIndex && { index: 0 }), type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(args) } })
	const c = (delta: Record<string, unknown>, finish: string | null = null) => data(chunk(id, model, { role: 'assistant', content: '', ...delta }, finish))
	return {
		stream: [c({ tool_calls: [call('call_k3xq81nd', PARIS)] }), c({ tool_calls: [call('call_p2mz04ab', TOKYO)] }), c({}, 'tool_calls'), data(usageChunk(id, model, TWO_CALLS_USAGE)), DONE],
		tail: 1,
		json: completion(id, model, { content: '', tool_calls: [call('call_k3xq81nd', PARIS), call('call_p2mz04ab', TOKYO)] }, 'tool_calls', TWO_CALLS_USAGE),
	}
}

/**
 * Mistral (https://docs.mistral.ai/capabilities/function_calling, API ref `CompletionResponseStreamChoice`): a tool call
 * arrives whole in one delta with a 9-character id, in the same chunk as `finish_reason: "tool_calls"` and `usage`.
 */
export const MISTRAL_ID = 'D681PevKs'
export const MISTRAL_USAGE = { prompt_tokens: 70, total_tokens: 95, completion_tokens: 25 }

function mistralTool(model: string): Scenario {
	const id = 'cf79286a8d2b4b2f9ad8d1c41e5a4b8e'
	const call = { id: MISTRAL_ID, function: { name: 'get_weather', arguments: JSON.stringify(PARIS) }, index: 0 }
	return {
		stream: [data(chunk(id, model, { role: 'assistant', content: '' })), data(chunk(id, model, { tool_calls: [call] }, 'tool_calls', { usage: MISTRAL_USAGE })), DONE],
		tail: 1,
		json: completion(id, model, { content: '', tool_calls: [{ ...call, type: 'function' }] }, 'tool_calls', MISTRAL_USAGE),
	}
}

/**
 * Mistral's other finish reasons (API ref `FinishReason`: stop, length, model_length, error, tool_calls):
 * `model_length` — the model's context was full, the answer is cut; `error` — generation failed.
 */
export const CUT_TEXT = 'The answer was cut'
export const CUT_USAGE = { prompt_tokens: 12, total_tokens: 16, completion_tokens: 4 }

function mistralFinish(model: string, reason: string): Scenario {
	const id = 'b1f6d1d0c1e24f1f8f1c0c3f5b1e2d3a'
	return {
		stream: [data(chunk(id, model, { role: 'assistant', content: 'The answer' })), data(chunk(id, model, { content: ' was cut' })), data(chunk(id, model, { content: '' }, reason, { usage: CUT_USAGE })), DONE],
		tail: 1,
		json: completion(id, model, { content: CUT_TEXT }, reason, CUT_USAGE),
	}
}

/** Some compatibles (WIRE-NOTES wire §8) send `function.arguments` as an object instead of a JSON string. */
function objectArgs(model: string): Scenario {
	const id = 'chatcmpl-objargs'
	const call = { id: 'call_obj1', index: 0, type: 'function', function: { name: 'get_weather', arguments: PARIS } }
	return {
		stream: [data(chunk(id, model, { role: 'assistant', content: null, tool_calls: [call] })), data(chunk(id, model, {}, 'tool_calls')), data(usageChunk(id, model, MISTRAL_USAGE)), DONE],
		tail: 1,
		json: completion(id, model, { content: null, tool_calls: [call] }, 'tool_calls', MISTRAL_USAGE),
	}
}

/**
 * A server whose call id changes after the first delta (poolsideai/pool#9: "two different id values for a single
 * logical tool call"): the first delta has id A and the name, the argument deltas id B and no name. One call.
 */
function unstableIds(model: string): Scenario {
	const id = 'chatcmpl-unstable'
	const c = (delta: Record<string, unknown>, finish: string | null = null) => data(chunk(id, model, delta, finish))
	const part = (callId: string, fn: Record<string, unknown>) => ({ tool_calls: [{ index: 0, id: callId, type: 'function', function: fn }] })
	return {
		stream: [
			c({ role: 'assistant', content: null, ...part('call_first01', { name: 'get_weather', arguments: '' }) }),
			c(part('call_other02', { arguments: '{"city":' })),
			c(part('call_other02', { arguments: ' "Paris"}' })),
			c({}, 'tool_calls'),
			data(usageChunk(id, model, MISTRAL_USAGE)),
			DONE,
		],
		tail: 1,
		json: completion(id, model, { content: null, tool_calls: [{ id: 'call_first01', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(PARIS) } }] }, 'tool_calls', MISTRAL_USAGE),
	}
}

export const TOOL_SCENARIOS: Record<string, (model: string) => Scenario> = {
	'ollama-tools': (m) => twoCalls(m, true),
	'noindex-tools': (m) => twoCalls(m, false),
	'mistral-large': mistralTool,
	'mistral-model-length': (m) => mistralFinish(m, 'model_length'),
	'mistral-error': (m) => mistralFinish(m, 'error'),
	'args-object': objectArgs,
	'unstable-ids': unstableIds,
}
