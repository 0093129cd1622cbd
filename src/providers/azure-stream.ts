/**
 * Azure OpenAI opens a chat stream with a chunk of its own: `choices: []`, `prompt_filter_results`, and an empty `id`,
 * `model` and `object` with `created: 0` (https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter).
 * Relayed as it came, OpenAI clients take the stream's id, model and time from it (the AI SDK's response id is then
 * empty and its timestamp 1970). The Azure adapter's `answer` holds it and sends it completed from the chunk after it;
 * past those two events the stream's bytes go through as they came.
 * @module
 */

type Obj = Record<string, unknown>

/** Whether a stream's first chunk is Azure's prompt filter chunk. */
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
	let chunk: Obj
	try {
		chunk = JSON.parse(held) as Obj
	} catch {
		return held
	}
	for (const key of ['id', 'object', 'created', 'model', 'system_fingerprint'])
		if (source[key] !== undefined && (chunk[key] === undefined || chunk[key] === '' || chunk[key] === 0)) chunk[key] = source[key]
	if (!chunk.object) chunk.object = 'chat.completion.chunk'
	return JSON.stringify(chunk)
}

/** The end of an SSE event (a blank line), and where the next one starts. */
const EVENT_END = /\r?\n\r?\n/

/** An event's data (its `data:` lines joined), or undefined for one without (a comment). */
function dataOf(event: string): string | undefined {
	let data: string | undefined
	for (const line of event.split(/\r?\n/)) {
		if (!line.startsWith('data:')) continue
		const value = line.slice(line[5] === ' ' ? 6 : 5)
		data = data === undefined ? value : `${data}\n${value}`
	}
	return data
}

/** The last bytes of a chunk that begin a UTF-8 character and do not finish it. */
function incompleteTail(chunk: Uint8Array): Uint8Array {
	for (let i = chunk.length - 1; i >= Math.max(0, chunk.length - 3); i--) {
		const b = chunk[i]!
		if (b < 0x80) break
		if (b < 0xc0) continue
		const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2
		return chunk.length - i < size ? chunk.subarray(i) : chunk.subarray(chunk.length)
	}
	return chunk.subarray(chunk.length)
}

/**
 * Azure's chat stream with its prompt filter chunk completed: the text is read up to the first event with data (and,
 * when that is the filter chunk, up to the one after it); every byte after goes through unread.
 */
export function completedPromptFilterStream(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
	const decoder = new TextDecoder()
	const encoder = new TextEncoder()
	/** Text read and not yet sent. */
	let head = ''
	/** The filter chunk's data while held, and where its event is in `head`. */
	let held: { data: string; start: number; end: number } | undefined
	let done = false

	const filled = (h: NonNullable<typeof held>, next: string | undefined) => `${head.slice(0, h.start)}data: ${completePromptFilterChunk(h.data, next)}\n\n${head.slice(h.end)}`

	/** What can go out now; `done` once the first chunk is settled. */
	function release(end: boolean): string {
		let at = held?.end ?? 0
		for (let m = EVENT_END.exec(head.slice(at)); m; m = EVENT_END.exec(head.slice(at))) {
			const start = at
			at += m.index + m[0].length
			const data = dataOf(head.slice(start, start + m.index))
			if (data === undefined) continue // a comment stays where it is
			done = true
			if (held) return filled(held, data === '[DONE]' ? undefined : data)
			if (!isPromptFilterChunk(data)) return head
			held = { data, start, end: at }
			done = false
		}
		if (end) return held ? filled(held, undefined) : head
		// Comments before the first chunk go out as they come; the held chunk and what follows it wait.
		const ready = held ? held.start : at
		const out = head.slice(0, ready)
		head = head.slice(ready)
		if (held) held = { data: held.data, start: 0, end: held.end - ready }
		return out
	}

	return body.pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform(chunk, controller) {
				if (done) return controller.enqueue(chunk)
				head += decoder.decode(chunk, { stream: true })
				const text = release(false)
				if (text) controller.enqueue(encoder.encode(text))
				if (!done) return
				head = ''
				// bytes of a character the decoder still holds go on as they came
				const tail = incompleteTail(chunk)
				if (tail.length) controller.enqueue(tail)
			},
			flush(controller) {
				if (done) return
				head += decoder.decode()
				const text = release(true)
				if (text) controller.enqueue(encoder.encode(text))
			},
		}),
	)
}
