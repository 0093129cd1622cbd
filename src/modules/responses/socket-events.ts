/**
 * What a Responses socket's response changes in the POST it stands for and in the events the client gets: the
 * `include` of reasoning's `encrypted_content` the gateway adds for a `store: false` reasoning response it may have to
 * replay from memory (and strips from the client's events), and the `previous_response_id` a continuation from memory
 * names.
 * @module
 */
import { jsonObjectOrUndefined } from '../../core/json'
import { REDACTED_MARK, SIGNATURE_MARK } from '../../protocols/openai-responses/reasoning'

/** The `include` value that asks for reasoning's encrypted content. */
export const ENCRYPTED = 'reasoning.encrypted_content'

/**
 * OpenAI's reasoning models by name (o-series, gpt-5 and later but gpt-5-chat, codex-), which reason without being
 * asked to; looked up without a router's vendor prefix (`openai/o4-mini`).
 */
const REASONING_MODEL = /^(o\d|gpt-5(?!-chat)|gpt-[6-9]|codex-)/
const reasons = (model: string) => REASONING_MODEL.test(model.slice(model.lastIndexOf('/') + 1))

/**
 * Whether the gateway asks for reasoning's `encrypted_content` for this response, the client not having asked: a
 * `store: false` response of a model that reasons may be continued from the connection's memory, and OpenAI finds a
 * replayed reasoning item of an unstored response only by that content (it answers 404 "Item with id 'rs_…' not found.
 * Items are not persisted when `store` is set to false" for one sent by id alone: vercel/ai#7543), where its own
 * socket keeps the state itself. Only for a model that reasons (an effort other than `none`, or a reasoning model's
 * name): OpenAI's other models do not take the `include`. The name is the client's and, `served`, what the channels that
 * serve it send upstream instead (`model_map`): an alias of a reasoning model reasons as the model does.
 * @example asksEncrypted({ model: 'fast-thinker', store: false }, ['o4-mini']) === true
 */
export function asksEncrypted(body: Record<string, unknown>, served: string[] = []): boolean {
	if (body.store !== false) return false
	if (Array.isArray(body.include) && body.include.includes(ENCRYPTED)) return false
	const reasoning = body.reasoning as { effort?: unknown } | null | undefined
	if (reasoning && typeof reasoning === 'object' && typeof reasoning.effort === 'string') return reasoning.effort !== 'none'
	return (typeof body.model === 'string' && reasons(body.model)) || served.some(reasons)
}

export type Item = Record<string, unknown>

/** OpenAI's own encrypted reasoning (not the marks this gateway puts on other vendors' thinking, which the POST always sends). */
const openaiEncrypted = (item: unknown): item is Item => {
	const enc = (item as Item | null)?.encrypted_content
	return (item as Item | null)?.type === 'reasoning' && typeof enc === 'string' && !enc.startsWith(SIGNATURE_MARK) && !enc.startsWith(REDACTED_MARK)
}

/**
 * An event as the client gets it: when the response continued one from memory, its Response object names the
 * `previous_response_id` the client sent (the POST went without it, as plain input), as the Response of any
 * continuation does; when the gateway asked for `encrypted_content` itself, the reasoning items (of
 * `output_item.added`/`done` and of the Response's output) go without it, as the POST the client asked for answers.
 */
export function forClient(data: string, previous: string | undefined, strip: boolean): string {
	const names = previous !== undefined && data.includes('"response":')
	const strips = strip && data.includes('"encrypted_content"')
	if (!names && !strips) return data
	const event = jsonObjectOrUndefined(data) as { item?: unknown; response?: Item } | undefined
	if (!event) return data
	const response = event.response && typeof event.response === 'object' && event.response.object === 'response' ? event.response : undefined
	if (names && response) response.previous_response_id = previous
	if (strips) {
		const items = [event.item, ...(response && Array.isArray(response.output) ? response.output : [])]
		for (const item of items) if (openaiEncrypted(item)) delete item.encrypted_content
	}
	return JSON.stringify(event)
}

/**
 * An event of a response created on a lane (its `response.create`'s `stream_id`): every event of that response, its
 * steering answers and its refusal included, echoes the lane (the openai SDKs' `ResponsesServerEvent` types). The
 * gateway runs a connection's lanes one after another, which keeps each lane first in, first out.
 * @example onLane('{"type":"response.created"}', 'a') // '{"type":"response.created","stream_id":"a"}'
 */
export const onLane = (text: string, lane: string | undefined): string =>
	lane === undefined ? text : `${text.slice(0, text.lastIndexOf('}'))},"stream_id":${JSON.stringify(lane)}}`
