/**
 * `previous_response_id` naming a converted response (another vendor's model: Claude, Gemini, chat-only upstreams).
 * OpenAI keeps a stored response's context and prepends it itself; such a response exists only as this gateway's copy
 * (converted-items.ts), so the gateway does the same: the previous response's whole input, its output items, then the
 * new `input`, sent as plain input (no `previous_response_id` upstream), as conversations/turn.ts does for a
 * conversation. Each kept response holds only its own input and the id it continued: its whole input is the chain's
 * inputs and outputs in turn order (`wholeInput`), read in one query (or from memory on the instance that answered).
 *
 * The previous response's `instructions` are not carried over: "When using along with previous_response_id, the
 * instructions from a previous response will not be carried over to the next response"
 * (https://platform.openai.com/docs/api-reference/responses/create#responses-create-instructions). They are a field of
 * the request, never one of its input items, so the expansion leaves them out by itself.
 *
 * An id recorded to the account on an OpenAI channel is left as it is (OpenAI holds its items: continued there, and a
 * 400 for another vendor's model); any other id, also that of a `store: false` answer (nothing kept), is the 400
 * `previous_response_not_found` OpenAI gives an unknown id.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { Services } from '../../services'
import { type Item, type StoredItem, inputItems, toStore } from '../conversations/items'
import type { ConvertedItems, KeptResponse } from './converted-items'
import { checkContinuation } from './ownership'

const isStoredItem = (x: unknown): x is StoredItem =>
	!!x && typeof x === 'object' && typeof (x as StoredItem).itemId === 'string' && !!(x as StoredItem).item && typeof (x as StoredItem).item === 'object'

/** A continuation of a converted response, expanded: the id it continued, and its own input to keep. */
export type Expanded = { previous: string; own: StoredItem[] }

/**
 * The whole input of the last response of `chain` (converted-items.ts: the first turn first), or undefined when it
 * cannot be told: a turn kept before inputs were, or the chain's start is gone (purged, or too long). A turn without
 * `previous` starts it, its input whole (a copy kept before chains were holds its previous turns expanded).
 */
export function wholeInput(chain: KeptResponse[]): StoredItem[] | undefined {
	if (!chain.length || chain[0]!.previous !== null) return undefined
	const out: StoredItem[] = []
	for (const [i, k] of chain.entries()) {
		if (!k.input || !k.input.every(isStoredItem)) return undefined
		out.push(...(k.input as StoredItem[]))
		if (i < chain.length - 1) out.push(...toStore(inputItems(k.response.output)))
	}
	return out
}

/**
 * Expands `body` (a copy the route owns) when its `previous_response_id` names a converted response of the account:
 * `input` becomes the previous input, output and new input, and `previous_response_id` goes. Undefined (body
 * untouched) when it names none, or an OpenAI response of the account; OpenAI's 400 for any other id.
 */
export async function expandPrevious(svc: Pick<Services, 'db'>, items: ConvertedItems, accountId: number, body: Record<string, unknown>): Promise<Expanded | undefined> {
	const id = body.previous_response_id
	if (typeof id !== 'string' || !id) return undefined
	const chain = await items.chain(accountId, id)
	if (!chain) {
		// Not a converted response of the account's: the rule for stored OpenAI ids (400 unless recorded to the account).
		await checkContinuation(svc, accountId, { previous_response_id: id })
		return undefined
	}
	const before = wholeInput(chain)
	// A copy kept before inputs were, or whose first turns are gone: continuing it would silently drop turns.
	if (!before)
		throw new GatewayError(
			'invalid_request',
			`Previous response '${id}' cannot be continued: its input was not kept. Send the whole conversation in \`input\` instead.`,
			{ code: 'previous_response_unavailable', param: 'previous_response_id' },
		)
	const output = toStore(inputItems(chain.at(-1)!.response.output))
	const sent = typeof body.input === 'string' ? inputItems(body.input) : Array.isArray(body.input) ? (body.input as Item[]) : []
	body.input = [...before.map((s) => s.item), ...output.map((s) => s.item), ...sent]
	delete body.previous_response_id
	return { previous: id, own: toStore(inputItems(sent)) }
}

/** The input a converted response keeps: its request's own (a continuation's, before the previous turns went in front), each item with an id. */
export const keptInput = (body: Record<string, unknown>, expanded: Expanded | undefined): StoredItem[] => expanded?.own ?? toStore(inputItems(body.input))
