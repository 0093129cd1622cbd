/**
 * Message threads (beta `message-threads-2026-08-12`, https://platform.claude.com/docs/en/build-with-claude/message-threads):
 * a request with `thread: {type: 'create'}` is answered as usual and the conversation (system, tools, messages and
 * the reply) is kept under the reply's `id`; `thread: {type: 'continue', previous_message_id}` sends only the new
 * messages, which the API appends to the kept conversation before it answers. A continue whose thread is unknown is
 * a 404 `not_found_error` with `details.error_code: 'thread_not_found'` (the SDK then replays the whole conversation
 * under a new `create`); a reply can be continued once (`thread_already_continued`, 400). Only the mock's own memory
 * holds threads, so a continue through another mock (another vendor account) is not found, as at Anthropic.
 * @module
 */

import { asObj, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { invalid } from './errors'

export const THREADS_BETA = 'message-threads-2026-08-12'

type Kept = { system: unknown; tools: unknown; messages: unknown[]; continued: boolean }

/** The threads one mock keeps, by reply id. */
export type ThreadStore = Map<string, Kept>

/** What a request with `thread` becomes: the full request to answer, and how to keep its reply; or the refusal. */
export type Threaded = { body: Obj; keep(id: string, content: Obj[]): void } | { refused: Reply }

const threadError = (status: number, type: string, code: string, message: string): Reply =>
	json({ type: 'error', error: { type, message, details: { error_code: code } } }, status)

/** The request to answer for a body that names a `thread` (undefined without one). */
export function threaded(b: Obj, headers: Headers, store: ThreadStore): Threaded | undefined {
	if (b.thread === undefined) return undefined
	const thread = asObj(b.thread)
	if (!(headers.get('anthropic-beta') ?? '').split(',').some((v) => v.trim() === THREADS_BETA))
		return { refused: invalid(`thread: Extra inputs are not permitted (the ${THREADS_BETA} beta header enables it)`) }
	const { thread: _, ...rest } = b
	// The conversation answered, kept with its reply under the reply's id.
	const keeper = (body: Obj) => (id: string, content: Obj[]) =>
		store.set(id, { system: body.system, tools: body.tools, messages: [...asMessages(body.messages), { role: 'assistant', content }], continued: false })
	if (thread?.type === 'create') return { body: rest, keep: keeper(rest) }
	if (thread?.type !== 'continue') return { refused: invalid("thread.type: Input should be 'create' or 'continue'") }
	const previous = asStr(thread.previous_message_id) ?? ''
	const kept = store.get(previous)
	if (!kept) return { refused: threadError(404, 'not_found_error', 'thread_not_found', `thread: no thread state was found for previous_message_id ${previous}`) }
	if (kept.continued) return { refused: threadError(400, 'invalid_request_error', 'thread_already_continued', `thread: ${previous} has already been continued`) }
	kept.continued = true
	const body: Obj = { ...rest, messages: [...kept.messages, ...asMessages(rest.messages)] }
	if (kept.system !== undefined) body.system = kept.system
	if (kept.tools !== undefined) body.tools = kept.tools
	return { body, keep: keeper(body) }
}

const asMessages = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
