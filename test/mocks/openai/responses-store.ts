/**
 * The mock's stored responses, one store per mock: what `POST /v1/responses` stores (unless `store: false`), and the
 * routes on a stored response (platform.openai.com/docs/api-reference/responses):
 * - `GET /v1/responses/{id}`: the Response object; a background response still `queued` finishes at its first
 *   retrieve (the work done between the POST and the poll), so tests decide when it completes; one whose input says
 *   `#running` stays `in_progress` until cancelled. With `?stream=true`
 *   its events as the POST would have streamed them, after `starting_after`.
 * - `DELETE /v1/responses/{id}`: `{id, object: 'response', deleted: true}`.
 * - `POST /v1/responses/{id}/cancel`: a queued background response becomes `cancelled` (no usage); a synchronous
 *   one is a 400, as OpenAI answers.
 * - `GET /v1/responses/{id}/input_items`: a cursor page (`after`, `limit`, `order`; newest first by default) of the
 *   input items, each with an id.
 * - `POST /v1/responses/input_tokens`: `{object: 'response.input_tokens', input_tokens}` of the body.
 * A continuation (`previous_response_id` of a stored response) counts the chain's inputs and outputs as its input
 * tokens, as OpenAI bills it.
 * @module
 */

import { asArr, asObj, asStr, type Obj } from '../shared/json'
import { frame, json, sse, type Reply } from '../shared/reply'
import { plan } from '../shared/scenario'
import { stableId } from '../shared/text'
import { openaiError } from './errors'
import { inputItems, readResponses } from './responses-read'

type Stored = {
	/** What GET answers now. */
	current: Obj
	/** A background response's finished form, which it takes at its first retrieve. */
	finished?: Obj
	/** A background response that runs until cancelled. */
	running?: boolean
	/** Its stream events (frames' data objects), for a streamed retrieve. */
	events: Obj[]
	input: Obj[]
	/** The conversation's texts up to and including this response (its chain's inputs and outputs), which a
	 * continuation (`previous_response_id`) is billed as input for. */
	context: string[]
}

export type ResponsesStore = Map<string, Stored>

const stores = new WeakMap<object, ResponsesStore>()

/** The store of one mock (keyed by its options object). */
export function storeOf(opts: object): ResponsesStore {
	let s = stores.get(opts)
	if (!s) stores.set(opts, (s = new Map()))
	return s
}

/**
 * The texts a continuation of `b` carries before its own input: the stored chain it continues. OpenAI bills them as
 * input tokens ("when previous_response_id is given, all the previous inputs are charged": the conversation state
 * guide, and community.openai.com/t/1327213).
 */
export const priorContext = (store: ResponsesStore, b: Obj): string[] =>
	(typeof b.previous_response_id === 'string' ? store.get(b.previous_response_id)?.context : undefined) ?? []

/** The texts of a finished response's output messages. */
const outputTexts = (final: Obj): string[] =>
	asArr(final.output)
		.flatMap((item) => asArr(asObj(item)?.content))
		.map((part) => asObj(part)?.text)
		.filter((text): text is string => typeof text === 'string')

/**
 * Remembers a response answered to `b` (unless `store: false`): `final` is the finished Response object, `inputTexts`
 * the texts it was billed input for (its chain's included).
 */
export function storeResponse(store: ResponsesStore, b: Obj, final: Obj, events: Obj[], inputTexts: string[] = []): Obj {
	const context = [...inputTexts, ...outputTexts(final)]
	const input = inputItems(b.input).map((item, i) => ({ id: stableId('msg_', `${final.id}|in|${i}`, 32), ...(item.type ? {} : { type: 'message' }), ...item }))
	if (b.background === true) {
		const queued = { ...final, status: 'queued', output: [], usage: null, incomplete_details: null, background: true }
		const running = JSON.stringify(b.input ?? '').includes('#running')
		store.set(String(final.id), { current: queued, finished: { ...final, background: true }, running, events, input, context })
		return queued
	}
	if (b.store !== false) store.set(String(final.id), { current: final, events, input, context })
	return final
}

/**
 * OpenAI resolves an `item_reference`, and in a stored request a reasoning item replayed by its id without its
 * `encrypted_content`, among the items its stored responses hold (their inputs and outputs) in the key's project: one
 * it does not hold is a 404.
 */
export function checkItemReferences(store: ResponsesStore, b: Obj): Reply | undefined {
	for (const item of inputItems(b.input)) {
		const looked = item.type === 'item_reference' || (item.type === 'reasoning' && b.store !== false && item.id !== undefined && item.encrypted_content === undefined)
		if (!looked) continue
		const id = String(item.id)
		const held = [...store.values()].some((s) => [...asArr(s.current.output), ...s.input].some((x) => asObj(x)?.id === id))
		if (!held) return openaiError(404, `Item with id '${id}' not found.`, 'input')
	}
	return undefined
}

const notFound = (id: string) => openaiError(404, `Response with id '${id}' not found.`, null, null, 'invalid_request_error')

/** Routes under `/v1/responses/…` other than the POST itself; undefined when the path is none of them. */
export function storedResponseRoute(store: ResponsesStore, method: string, path: string, query: Record<string, string>, body: unknown): Reply | undefined {
	if (method === 'POST' && path === '/v1/responses/input_tokens') {
		const b = (body ?? {}) as Obj
		const conv = readResponses(b)
		conv.inputTexts.unshift(...priorContext(store, b))
		return json({ object: 'response.input_tokens', input_tokens: plan(conv).usage.input })
	}
	const m = /^\/v1\/responses\/([^/]+)(\/cancel|\/input_items)?$/.exec(path)
	if (!m) return undefined
	const id = decodeURIComponent(m[1]!)
	const s = store.get(id)
	if (!s) return notFound(id)
	const what = `${method} ${m[2] ?? ''}`
	if (what === 'GET ') {
		if (s.finished && s.current.status === 'queued') s.current = s.running ? { ...s.current, status: 'in_progress' } : s.finished
		if (query.stream === 'true') {
			const after = query.starting_after === undefined ? -1 : Number(query.starting_after)
			return sse(
				s.events.filter((e) => Number(e.sequence_number) > after).map((e) => frame(e, asStr(e.type))),
				1,
			)
		}
		return json(s.current)
	}
	if (what === 'DELETE ') {
		store.delete(id)
		return json({ id, object: 'response', deleted: true })
	}
	if (what === 'POST /cancel') {
		if (!s.finished) return openaiError(400, 'Cannot cancel a synchronous response.', null, null, 'invalid_request_error')
		if (s.current.status === 'queued' || s.current.status === 'in_progress') s.current = { ...s.current, status: 'cancelled' }
		return json(s.current)
	}
	if (what === 'GET /input_items') {
		const ordered = query.order === 'asc' ? s.input : [...s.input].reverse()
		const from = query.after ? ordered.findIndex((i) => i.id === query.after) + 1 : 0
		const limit = query.limit ? Number(query.limit) : 20
		const data = ordered.slice(from, from + limit)
		return json({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: from + limit < ordered.length })
	}
	return openaiError(404, `Invalid URL (${method} ${path})`, null, null, 'invalid_request_error')
}
