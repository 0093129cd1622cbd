/**
 * A message batch's results (JSONL, `{custom_id, result}` a line) as the client reads them: each succeeded request's
 * message names the model as the client asked for it, as `messages.create` does (relay/fast-path.ts `renameModel`).
 * @module
 */
import { renameModel } from '../../relay/fast-path'
import type { Channel } from '../../routing/catalog'
import type { BatchRecord } from '../../tasks/batch'

const CUSTOM_ID = /^\s*\{\s*"custom_id"\s*:\s*("(?:[^"\\]|\\.)*")/

/**
 * The results with the model of each request the channel renamed (`model_map`) shown under the client's name: a
 * request's model is `record.models[custom_id]`, else `model` (a batch of one model). Each line's first `"model"`
 * member is its message's (Anthropic writes a line's `custom_id`, then the message's id, type, role and model before
 * its content; a key inside a string is escaped and cannot match), rewritten as the lines stream through; the rest of
 * each line goes as Anthropic sent it. The body itself when no model of the batch was renamed.
 */
export function resultsAsAsked(body: ReadableStream<Uint8Array>, record: BatchRecord, model: string, ch: Channel): ReadableStream<Uint8Array> {
	const renamed = (m: string) => (ch.modelMap[m] ?? m) !== m
	const models = record.models
	if (models ? !Object.values(models).some(renamed) : !renamed(model)) return body
	return mapLines(body, (line) => {
		const asked = models ? (models[customIdOf(line) ?? ''] ?? model) : model
		return line.trim() && renamed(asked) ? renameModel(line, asked) : line
	})
}

/** The line's `custom_id`, read from its start where Anthropic writes it, else from the parsed line. */
function customIdOf(line: string): string | undefined {
	try {
		const at = CUSTOM_ID.exec(line)
		const id: unknown = at ? JSON.parse(at[1]!) : (JSON.parse(line) as { custom_id?: unknown } | null)?.custom_id
		return typeof id === 'string' ? id : undefined
	} catch {
		return undefined
	}
}

/** The text of `body` with each line (without its `\n`) as `map` makes it, the lines' ends kept. */
function mapLines(body: ReadableStream<Uint8Array>, map: (line: string) => string): ReadableStream<Uint8Array> {
	let rest = ''
	const lines = new TransformStream<string, string>({
		transform(chunk, c) {
			const text = rest + chunk
			const end = text.lastIndexOf('\n')
			if (end === -1) {
				rest = text
				return
			}
			rest = text.slice(end + 1)
			c.enqueue(`${text.slice(0, end).split('\n').map(map).join('\n')}\n`)
		},
		flush(c) {
			if (rest) c.enqueue(map(rest))
		},
	})
	return body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).pipeThrough(lines).pipeThrough(new TextEncoderStream())
}
