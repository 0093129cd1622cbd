/**
 * Text and reasoning answers of OpenAI-compatible vendors, in the formats their docs show: DeepSeek's
 * `reasoning_content` and cache-hit usage, OpenRouter's `reasoning` / `reasoning_details`, SSE comments and `cost`,
 * Groq's `x_groq.usage`, xAI's reasoning tokens outside `completion_tokens`, and a vLLM / LM Studio server that sends no usage at all.
 * @module
 */
import { chunk, completion, CREATED, data, DONE, type Scenario, usageChunk } from './chunks'

/**
 * DeepSeek reasoner (https://api-docs.deepseek.com/guides/reasoning_model, /api/create-chat-completion): reasoning in
 * `delta.reasoning_content` (null once the answer starts), usage in the LAST chunk together with `finish_reason`,
 * cache reads as `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens` (included in `prompt_tokens`).
 */
export const DEEPSEEK_THINKING = 'The user greets me. I reply politely.'
export const DEEPSEEK_TEXT = 'Hello there!'
export const DEEPSEEK_USAGE = { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70, prompt_cache_hit_tokens: 32, prompt_cache_miss_tokens: 8, completion_tokens_details: { reasoning_tokens: 12 } }

function deepseek(model: string): Scenario {
	const id = '930c60df-bf64-41c9-a88e-3ec75f81e00e'
	const c = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) => data(chunk(id, model, delta, finish, extra))
	return {
		stream: [
			c({ role: 'assistant', content: null, reasoning_content: '' }),
			c({ content: null, reasoning_content: 'The user greets me. ' }),
			c({ content: null, reasoning_content: 'I reply politely.' }),
			c({ content: 'Hello', reasoning_content: null }),
			c({ content: ' there!', reasoning_content: null }),
			c({ content: '', reasoning_content: null }, 'stop', { usage: DEEPSEEK_USAGE }),
			DONE,
		],
		tail: 1,
		json: completion(id, model, { content: DEEPSEEK_TEXT, reasoning_content: DEEPSEEK_THINKING }, 'stop', DEEPSEEK_USAGE),
	}
}

/**
 * OpenRouter (https://openrouter.ai/docs/api-reference/streaming, /use-cases/reasoning-tokens, /usage-accounting):
 * `: OPENROUTER PROCESSING` comment lines, reasoning both as `reasoning` and as `reasoning_details` (the signature in a
 * detail of its own), `native_finish_reason`, and a last usage chunk with `cost` and cached / reasoning details.
 */
export const OPENROUTER_THINKING = 'Consider the question. Answer briefly.'
export const OPENROUTER_SIGNATURE = 'EqQBCkgIBxABGAIiQL2mock'
export const OPENROUTER_TEXT = 'Paris is the capital.'
export const OPENROUTER_USAGE = {
	prompt_tokens: 50,
	completion_tokens: 20,
	total_tokens: 70,
	cost: 0.00042,
	is_byok: false,
	prompt_tokens_details: { cached_tokens: 30 },
	cost_details: { upstream_inference_cost: null },
	completion_tokens_details: { reasoning_tokens: 8 },
}

function openrouter(model: string): Scenario {
	const id = 'gen-1764300000-mockOR'
	const extra = { provider: 'Anthropic' }
	const detail = (d: Record<string, unknown>) => [{ format: 'anthropic-claude-v1', index: 0, ...d }]
	const c = (delta: Record<string, unknown>, finish: string | null = null) =>
		data({ ...chunk(id, model, { role: 'assistant', ...delta }, finish, extra), choices: [{ index: 0, delta: { role: 'assistant', ...delta }, finish_reason: finish, native_finish_reason: finish && 'end_turn', logprobs: null }] })
	return {
		stream: [
			': OPENROUTER PROCESSING\n\n',
			c({ content: '', reasoning: 'Consider the question. ', reasoning_details: detail({ type: 'reasoning.text', text: 'Consider the question. ' }) }),
			': OPENROUTER PROCESSING\n\n',
			c({ content: '', reasoning: 'Answer briefly.', reasoning_details: detail({ type: 'reasoning.text', text: 'Answer briefly.' }) }),
			c({ content: '', reasoning: null, reasoning_details: detail({ type: 'reasoning.text', signature: OPENROUTER_SIGNATURE }) }),
			c({ content: 'Paris is' }),
			c({ content: ' the capital.' }),
			c({ content: '' }, 'stop'),
			data(usageChunk(id, model, OPENROUTER_USAGE, extra)),
			DONE,
		],
		tail: 1,
		json: completion(
			id,
			model,
			{ content: OPENROUTER_TEXT, refusal: null, reasoning: OPENROUTER_THINKING, reasoning_details: detail({ type: 'reasoning.text', text: OPENROUTER_THINKING, signature: OPENROUTER_SIGNATURE }) },
			'stop',
			OPENROUTER_USAGE,
			extra,
		),
	}
}

/**
 * OpenRouter's mid-stream failure (https://openrouter.ai/docs/api-reference/errors, "Error during streaming"): the
 * HTTP status is already 200, so a chunk carries a top-level `error` AND `finish_reason: "error"`, and the stream ends.
 */
export const OPENROUTER_ERROR = 'Provider disconnected unexpectedly'

function openrouterError(model: string): Scenario {
	const id = 'gen-1764300000-mockErr'
	const c = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) => data(chunk(id, model, delta, finish, { provider: 'OpenAI', ...extra }))
	return {
		stream: [': OPENROUTER PROCESSING\n\n', c({ role: 'assistant', content: 'Partial' }), c({ content: '' }, 'error', { error: { code: 'server_error', message: OPENROUTER_ERROR } })],
		tail: 0,
		json: { error: { code: 502, message: OPENROUTER_ERROR } },
	}
}

/**
 * Groq (https://console.groq.com/docs/api-reference#chat-create; vercel/ai#1651): the stream's usage rides in
 * `x_groq.usage` on the chunk with `finish_reason`, with Groq's timing fields, and no top-level `usage`.
 */
export const GROQ_TEXT = 'Hi from Groq.'
export const GROQ_USAGE = { queue_time: 0.0753, prompt_tokens: 23, prompt_time: 0.006, completion_tokens: 19, completion_time: 0.022, total_tokens: 42, total_time: 0.028 }

function groq(model: string): Scenario {
	const id = 'chatcmpl-8566e76f-7ded-47d7-a2ca-d212098af00c'
	const c = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => data({ ...chunk(id, model, delta, finish, extra), system_fingerprint: 'fp_179b0f92c9' })
	return {
		stream: [
			c({ role: 'assistant', content: '' }, null, { x_groq: { id: 'req_01hy8ppkajfqk987jv2vx88m9r' } }),
			c({ content: 'Hi from' }),
			c({ content: ' Groq.' }),
			c({}, 'stop', { x_groq: { id: 'req_01hy8ppkajfqk987jv2vx88m9r', usage: GROQ_USAGE } }),
			DONE,
		],
		tail: 1,
		json: completion(id, model, { content: GROQ_TEXT }, 'stop', GROQ_USAGE, { x_groq: { id: 'req_01hy8ppkajfqk987jv2vx88m9r' } }),
	}
}

/**
 * A self-hosted server that ignores `stream_options` (older vLLM, LM Studio, llama.cpp): `usage: null` on every chunk,
 * no usage chunk, and `usage: null` in the non-stream body too. The gateway must estimate.
 */
export const NOUSAGE_TEXT = 'Counting words is all the gateway can do here.'

function noUsage(model: string): Scenario {
	const id = 'chatcmpl-vllm-7f3a'
	const c = (delta: Record<string, unknown>, finish: string | null = null) => data(chunk(id, model, delta, finish, { usage: null }))
	return {
		stream: [c({ role: 'assistant', content: '' }), c({ content: 'Counting words is all' }), c({ content: ' the gateway can do here.' }), c({ content: '' }, 'stop'), DONE],
		tail: 1,
		json: completion(id, model, { content: NOUSAGE_TEXT }, 'stop', null),
	}
}

/**
 * xAI Grok reasoning models (https://docs.x.ai/docs/guides/reasoning, /key-information/consumption-and-rate-limits:
 * "reasoning token consumption will be counted separately from completion_tokens, but will be counted in the
 * total_tokens"): `reasoning_content` deltas, usage on the finish chunk, then one more chunk with empty choices
 * (BerriAI/litellm#17136).
 */
export const XAI_THINKING = 'Two plus two is four.'
export const XAI_TEXT = '4'
export const XAI_USAGE = {
	prompt_tokens: 32,
	completion_tokens: 9,
	total_tokens: 135,
	prompt_tokens_details: { text_tokens: 32, audio_tokens: 0, image_tokens: 0, cached_tokens: 6 },
	completion_tokens_details: { reasoning_tokens: 94, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
	num_sources_used: 0,
}

function xai(model: string): Scenario {
	const id = '3c1b5a4e-6f0d-4b9a-9d57-0b5f4f2f7a11'
	const c = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) => data({ ...chunk(id, model, delta, finish, extra), system_fingerprint: 'fp_mock' })
	return {
		stream: [
			c({ role: 'assistant', reasoning_content: 'Two plus two' }),
			c({ reasoning_content: ' is four.' }),
			c({ content: '4' }),
			c({}, 'stop', { usage: XAI_USAGE }),
			data({ id, object: 'chat.completion.chunk', created: CREATED, model, choices: [], system_fingerprint: 'fp_mock' }),
			DONE,
		],
		tail: 1,
		json: completion(id, model, { content: XAI_TEXT, reasoning_content: XAI_THINKING, refusal: null }, 'stop', XAI_USAGE, { system_fingerprint: 'fp_mock' }),
	}
}

export const REASONING_SCENARIOS: Record<string, (model: string) => Scenario> = {
	'deepseek-reasoner': deepseek,
	'openrouter-claude': openrouter,
	'groq-llama': groq,
	'vllm-nousage': noUsage,
	'grok-mini': xai,
	'openrouter-error': openrouterError,
}
