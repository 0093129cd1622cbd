/**
 * Conversation items as the gateway keeps them: Responses input and output items
 * (https://platform.openai.com/docs/api-reference/conversations/list-items), each with an id. What the client sends
 * may be shorthand (`{role, content: 'text'}`, or a whole `input` string): it is kept in the full form a conversation
 * lists (`type: 'message'`, content parts), which every channel reads as input too. An item without an id gets one
 * from the gateway, shown in lists but not sent upstream (OpenAI takes no id on an input message).
 * @module
 */
import { badRequest } from '../../core/errors'
import { randomString } from '../../lib/ids'
import { checkItems } from '../../protocols/openai-responses/items'

export type Item = Record<string, unknown>
/** An item ready to store: the id it is shown under, and the item as it goes upstream. */
export type StoredItem = { itemId: string; item: Item }

/** OpenAI's id prefixes by item type (`msg_…`, `fc_…`, `rs_…`); other types get `item_…`. */
const PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' }

const newItemId = (type: unknown) => `${PREFIX[String(type)] ?? 'item'}_${randomString(40)}`

/** A message's content as parts: a string becomes one `input_text` (an assistant's: `output_text`) part. */
function contentParts(role: unknown, content: unknown): unknown {
	if (typeof content !== 'string') return content
	return role === 'assistant' ? [{ type: 'output_text', text: content, annotations: [] }] : [{ type: 'input_text', text: content }]
}

/** One item in full form (`type` set, a message's content as parts). */
export function fullItem(x: Item): Item {
	const type = x.type ?? (x.role !== undefined ? 'message' : undefined)
	const out: Item = type === undefined ? { ...x } : { type, ...x }
	if (type === 'message') out.content = contentParts(out.role, out.content)
	return out
}

/** The items of a Responses `input` (a string is one user message) in full form; `item_reference`s are left out. */
export function inputItems(input: unknown): Item[] {
	if (typeof input === 'string') return [fullItem({ role: 'user', content: input })]
	if (!Array.isArray(input)) return []
	return input.filter((x): x is Item => !!x && typeof x === 'object' && (x as Item).type !== 'item_reference').map(fullItem)
}

/**
 * The items a client adds to a conversation (`POST /v1/conversations` and its `/items`) in full form, each checked as
 * `POST /v1/responses` checks its `input` (a 400 naming `items[i]…`): stored as given, a malformed item would fail
 * every later turn of the conversation instead. An `item_reference` is refused: the gateway's conversations hold the
 * items they are given, and a referenced item may be one only OpenAI holds (it went away silently, or left an empty
 * list, a 500).
 */
export function givenItems(items: unknown[]): Item[] {
	const at = items.findIndex((x) => !!x && typeof x === 'object' && (x as Item).type === 'item_reference')
	if (at !== -1)
		throw badRequest("Invalid value: 'item_reference'. A conversation on this gateway holds the items it is given: send the item itself (as returned in a response's output or a conversation's items), not a reference to it.", `items[${at}]`)
	checkItems(items, 'items')
	return inputItems(items)
}

/** Items to store: each keeps its own id, or gets one of the gateway's (kept beside it, not in the item). */
export const toStore = (items: Item[]): StoredItem[] =>
	items.map((item) => {
		const id = item.id
		if (typeof id === 'string' && id) return { itemId: id, item }
		const { id: _none, ...rest } = item
		return { itemId: newItemId(item.type), item: rest }
	})

/**
 * An item as a conversation lists it: with its id first, a message's `status`, and a reasoning item's
 * `encrypted_content` only when `include` asks for it (as OpenAI answers).
 */
export function itemView(s: StoredItem, include: readonly string[] = []): Item {
	const { id: _id, ...rest } = s.item
	const out: Item = { id: s.itemId, ...rest }
	if (out.type === 'message' && out.status === undefined) out.status = 'completed'
	if (out.type === 'reasoning' && !include.includes('reasoning.encrypted_content')) delete out.encrypted_content
	return out
}
