/**
 * Building blocks for OpenAI-compatible vendor bodies as each vendor writes them: `chat.completion.chunk` objects and
 * their SSE framing, kept as raw text so framing quirks (no space after `data:`, CRLF, comments, no `[DONE]`) survive.
 * @module
 */

/** One scripted answer: the stream exactly as written, chunk by chunk, and the non-stream body. */
export type Scenario = {
	/** Raw body pieces, each written separately (the mock runs with a chunk delay, so pieces are separate reads). */
	stream: string[]
	/** How many trailing pieces are the terminator (`data: [DONE]`); 0 when the vendor sends none. */
	tail: number
	/** The `chat.completion` body for `stream: false`. */
	json: unknown
}

export const CREATED = 1764300000

/** A `chat.completion.chunk` with one choice (index 0); `extra` adds top-level fields (usage, x_groq, provider…). */
export function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) {
	return { id, object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra }
}

/** The `include_usage` chunk: no choices, only usage. */
export const usageChunk = (id: string, model: string, usage: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
	id,
	object: 'chat.completion.chunk',
	created: CREATED,
	model,
	choices: [],
	usage,
	...extra,
})

/** `data: <json>` + blank line, with the vendor's separator after the colon and its line ending. */
export const data = (obj: unknown, sep = ' ', eol = '\n') => `data:${sep}${JSON.stringify(obj)}${eol}${eol}`

export const DONE = 'data: [DONE]\n\n'

/** A non-stream `chat.completion`. */
export function completion(id: string, model: string, message: Record<string, unknown>, finish: string, usage: Record<string, unknown> | null, extra: Record<string, unknown> = {}) {
	return { id, object: 'chat.completion', created: CREATED, model, choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finish }], usage, ...extra }
}
