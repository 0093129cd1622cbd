/**
 * Azure OpenAI opens a chat stream with a chunk of its own: `choices: []`, `prompt_filter_results`, and an empty `id`,
 * `model` and `object` with `created: 0` (https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter).
 * Relayed as it came, OpenAI clients take the stream's id, model and time from it (the AI SDK's response id is then
 * empty and its timestamp 1970). The fast path holds it and sends it completed from the chunk after it.
 * @module
 */

type Obj = Record<string, unknown>

/** Whether a stream's first chunk is Azure's prompt filter chunk (read only on the first frame). */
export const isPromptFilterChunk = (data: string): boolean => data.includes('"prompt_filter_results"') && data.includes('"id":""')

/**
 * The held chunk with the stream's `id`, `object`, `created`, `model` (and `system_fingerprint`) from the next one.
 * @example completePromptFilterChunk('{"choices":[],"id":"","model":"","object":"","created":0,"prompt_filter_results":[]}', '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":5,"model":"m","choices":[]}')
 */
export function completePromptFilterChunk(held: string, next: string | undefined): string {
	let source: Obj = {}
	try {
		if (next !== undefined) source = JSON.parse(next) as Obj
	} catch {
		// an unreadable next chunk: the stream's own fields stay unknown
	}
	const chunk = JSON.parse(held) as Obj
	for (const key of ['id', 'object', 'created', 'model', 'system_fingerprint'])
		if (source[key] !== undefined && (chunk[key] === undefined || chunk[key] === '' || chunk[key] === 0)) chunk[key] = source[key]
	if (!chunk.object) chunk.object = 'chat.completion.chunk'
	return JSON.stringify(chunk)
}
