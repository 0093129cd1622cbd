/**
 * `POST /v1/responses` with `conversation` naming one of this gateway's conversations
 * (https://platform.openai.com/docs/api-reference/responses/create#responses-create-conversation): "items from this
 * conversation are prepended to input_items for this response request. Input items and output items from this
 * response are automatically added to this conversation after this response completes."
 *
 * The request then goes on as an ordinary one whose `input` is the whole conversation: the reservation sizes it, every
 * channel reads it (OpenAI's too, as plain input, without `conversation`), the upstream bills it. The turn is appended
 * once the answer is known to have completed (the JSON body's `status`, a stream's `response.completed`), before the
 * client reads the end of it, so its next request already sees the turn.
 *
 * Reasoning: an OpenAI reasoning item is replayed as the conversation holds it. With `store` left on, OpenAI finds
 * it by its id; with `store: false` only its `encrypted_content` carries it, which the client asks for with
 * `include: ["reasoning.encrypted_content"]` as OpenAI requires for stateless use (the gateway does not add that
 * `include`: OpenAI refuses it for models without reasoning). A reasoning item of a `store: false` answer without
 * `encrypted_content` could never be replayed (OpenAI answers 404 for its id), so it is not kept.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { createSseParser, type SseFrame } from '../../core/sse'
import { passedOn } from '../../relay/sse-response'
import type { Services } from '../../services'
import { checkContinuation } from '../responses/ownership'
import { type Item, type StoredItem, inputItems, toStore } from './items'
import { holdConversation } from './lock'
import { allItems, appendItems, findConversation } from './store'

/** The conversation id a Responses request names (`"conv_…"` or `{id}`), if any. */
export function conversationIdOf(body: Record<string, unknown>): string | undefined {
	const c = body.conversation
	const id = typeof c === 'string' ? c : c && typeof c === 'object' ? (c as { id?: unknown }).id : undefined
	return typeof id === 'string' && id ? id : undefined
}

export type ConversationTurn = {
	/** The conversation's id. */
	id: string
	/** The turn's whole input (the conversation's items, then the request's own), each with its id in the conversation. */
	input: StoredItem[]
	/** The answer as the client gets it, the turn appended to the conversation once it completed, then let go of. */
	record(res: Response): Promise<Response>
	/** Lets go of the conversation without appending (the request failed before it had an answer); idempotent. */
	release(): Promise<void>
}

/**
 * The account's conversation a request names, checked: undefined when it names none, or one that is not this
 * gateway's but that the ownership rule lets through (responses/ownership.ts: recorded to the account); any other id
 * is 404.
 */
async function namedConversation(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>): Promise<string | undefined> {
	const id = conversationIdOf(body)
	if (id === undefined) return undefined
	// OpenAI's answer to both (the conversation already is the previous turns).
	if (typeof body.previous_response_id === 'string' && body.previous_response_id)
		throw new GatewayError('invalid_request', "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.", {
			code: 'mutually_exclusive_parameters',
			param: 'conversation',
		})
	const conv = await findConversation(svc.db, accountId, id)
	if (conv) return conv.id
	// Not the account's conversation here: the rule for other ids (404 unless one recorded to the account), before
	// any 400 a converted model would give for a conversation it cannot read.
	await checkContinuation(svc, accountId, { conversation: id })
	return undefined
}

/**
 * The items of a turn, each with the id the conversation lists it under: those the conversation held before it
 * (`history`), and the request's own input (`own`, given their ids here, once, so that the turn appended to the
 * conversation and the response's `input_items` name the same item by the same id).
 */
export type TurnInput = { history: StoredItem[]; own: StoredItem[] }

/** Puts the conversation's items before `body.input` and removes `conversation`. */
async function expand(svc: Pick<Services, 'db'>, id: string, body: Record<string, unknown>): Promise<TurnInput> {
	const own = toStore(inputItems(body.input))
	const sent = typeof body.input === 'string' ? own.map((s) => s.item) : Array.isArray(body.input) ? body.input : []
	const history = await allItems(svc.db, id)
	body.input = [...history.map((s) => s.item), ...sent]
	delete body.conversation
	return { history, own }
}

/**
 * Expands `body` (a copy the route owns) when it names one of the account's conversations: its items go before
 * `input` and `conversation` is removed. Any other conversation id is 404 unless the ownership rule lets it through,
 * and then undefined, `body` untouched. For counting input tokens: no turn, so the conversation is not held.
 */
export async function expandConversation(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>): Promise<{ id: string; input: TurnInput } | undefined> {
	const id = await namedConversation(svc, accountId, body)
	return id === undefined ? undefined : { id, input: await expand(svc, id, body) }
}

/**
 * What `expandConversation` does for `POST /v1/responses`, with the conversation held for the turn (lock.ts: a turn
 * already under way on it is OpenAI's 400 `conversation_locked`), and the appending of the turn it starts.
 */
export async function conversationTurn(svc: Pick<Services, 'db' | 'log'>, accountId: number, body: Record<string, unknown>): Promise<ConversationTurn | undefined> {
	const id = await namedConversation(svc, accountId, body)
	if (id === undefined) return undefined
	// A background response ends after this request; nothing would append it.
	if (body.background === true)
		throw new GatewayError('invalid_request', 'A conversation kept by this gateway cannot be continued by a background response: send it without `background`.', {
			code: 'unsupported_value',
			param: 'background',
		})
	// Held before it is read: a turn that started first has appended by the time this one reads.
	const hold = await holdConversation(svc.db, id)
	let input: TurnInput
	try {
		input = await expand(svc, id, body)
	} catch (e) {
		await hold.release()
		throw e
	}
	const stored = body.store !== false
	const append = async (output: unknown) => {
		const out = (Array.isArray(output) ? output : []).filter(
			(x): x is Item => !!x && typeof x === 'object' && (stored || (x as Item).type !== 'reasoning' || typeof (x as Item).encrypted_content === 'string'),
		)
		try {
			await appendItems(svc.db, id, [...input.own, ...toStore(out)])
		} catch (e) {
			svc.log.error('conversation turn not appended', { conversation: id, error: String(e) })
		}
	}
	return { id, input: [...input.history, ...input.own], release: hold.release, record: (res) => recorded(res, append, hold.release) }
}

/** The terminal frame's output when it is `response.completed`. */
function completedOutput(f: SseFrame): unknown[] | undefined {
	if (f.event !== undefined && f.event !== 'response.completed') return undefined
	try {
		const e = JSON.parse(f.data) as { type?: unknown; response?: { output?: unknown } }
		return e.type === 'response.completed' && Array.isArray(e.response?.output) ? e.response.output : undefined
	} catch {
		return undefined
	}
}

/**
 * The answer with the turn appended once it is known to have completed, and the conversation let go of once the
 * answer is over (completed or not, read to its end or left by the client).
 */
async function recorded(res: Response, append: (output: unknown) => Promise<void>, release: () => Promise<void>): Promise<Response> {
	if (res.status !== 200) {
		await release()
		return res
	}
	if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
		if (!res.body) {
			await release()
			return res
		}
		const parser = createSseParser()
		const decoder = new TextDecoder()
		let seen = false
		// The chunk holding `response.completed` waits for the append and the release, so a client that sends the
		// next turn as soon as it has read this one finds the turn there and the conversation free.
		// `cancel` (the client went away, or the body failed) is in the Streams standard and Bun, not yet in the DOM types.
		const watcher: Transformer<Uint8Array, Uint8Array> & { cancel: () => Promise<void> } = {
			async transform(chunk, ctl) {
				if (!seen)
					for (const f of parser.push(decoder.decode(chunk, { stream: true }))) {
						const output = completedOutput(f)
						if (!output) continue
						seen = true
						await append(output)
						await release()
						break
					}
				ctl.enqueue(chunk)
			},
			flush: () => release(),
			cancel: () => release(),
		}
		// Passed on as a stream the shutdown waits for, so that a stream it cuts ends with its error event (sse-response.ts).
		return new Response(passedOn(res.body.pipeThrough(new TransformStream(watcher))), { status: res.status, headers: res.headers })
	}
	try {
		const text = await res.text()
		try {
			const body = JSON.parse(text) as { status?: unknown; output?: unknown }
			if (body.status === 'completed') await append(body.output)
		} catch {
			// not JSON: nothing to append, the client gets it as it came
		}
		return new Response(text, { status: res.status, headers: res.headers })
	} finally {
		await release()
	}
}
