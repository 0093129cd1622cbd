/**
 * SSE framing quirks of OpenAI-compatible servers: `data:` without a space, CRLF line endings split across reads, no
 * `[DONE]`, `finish_reason` and usage in one chunk (llama.cpp server, LM Studio); and Azure OpenAI's first chunk with
 * empty `choices`, empty `id`/`model` and `prompt_filter_results`, plus an empty-choices keep-alive mid-stream.
 * @module
 */
import { chunk, completion, data, DONE, type Scenario, usageChunk } from './chunks'

export const FRAMING_TEXT = 'Lines end in CRLF here.'
// vLLM-style nulls for the details it does not track.
export const FRAMING_USAGE = { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14, prompt_tokens_details: null, completion_tokens_details: null }

function crlf(model: string): Scenario {
	const id = 'chatcmpl-llamacpp-1'
	const c = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) => data(chunk(id, model, delta, finish, extra), '', '\r\n')
	const last = c({}, 'stop', { usage: FRAMING_USAGE })
	return {
		// The last frame's CRLF CRLF is split over two writes: a reader must not dispatch on the lone CR.
		stream: [c({ role: 'assistant', content: 'Lines end' }), c({ content: ' in CRLF here.' }), last.slice(0, -3), last.slice(-3)],
		tail: 0,
		json: completion(id, model, { content: FRAMING_TEXT }, 'stop', FRAMING_USAGE),
	}
}

export const AZURE_TEXT = 'Filtered and fine.'
export const AZURE_USAGE = { prompt_tokens: 14, completion_tokens: 4, total_tokens: 18, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }

/** https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter (streaming annotations). */
function azure(model: string): Scenario {
	const id = 'chatcmpl-AzureMock01'
	const filter = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' } }
	const c = (delta: Record<string, unknown>, finish: string | null = null) => data({ ...chunk(id, model, delta, finish), choices: [{ content_filter_results: filter, delta, finish_reason: finish, index: 0, logprobs: null }] })
	const keepAlive = { choices: [], created: 0, id: '', model: '', object: '' }
	return {
		stream: [
			data({ ...keepAlive, prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }] }),
			c({ role: 'assistant', content: '' }),
			c({ content: 'Filtered' }),
			data(keepAlive),
			c({ content: ' and fine.' }),
			c({}, 'stop'),
			data(usageChunk(id, model, AZURE_USAGE)),
			DONE,
		],
		tail: 1,
		json: completion(id, model, { content: AZURE_TEXT }, 'stop', AZURE_USAGE, { prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }] }),
	}
}

export const FRAMING_SCENARIOS: Record<string, (model: string) => Scenario> = {
	'llamacpp-crlf': crlf,
	'azure-gpt': azure,
}
