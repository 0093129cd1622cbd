/**
 * Output items of converted responses (Anthropic, Gemini, chat-only upstreams), kept so that a later request can name
 * them by `item_reference`. OpenAI stores every response unless `store: false`, and stateful clients lean on it: the
 * Vercel AI SDK's Responses model (the default `openai(...)` model) stores by default and replays earlier assistant
 * text and reasoning as `{type: 'item_reference', id}` rather than the items themselves, so without this a second
 * turn to a converted model failed with 400 (`item_reference is only available on OpenAI models`).
 *
 * Kept only for requests that did not say `store: false`, in this process's memory, bounded by count, size and age,
 * per account (a client never reads another account's items;
 * the ids are random besides). A reference this instance does not hold (another instance answered, or the item
 * expired) still gets the 400 of `unconvertible`, which says to send the items themselves (`store: false`).
 * @module
 */
import type { EncodeContext, ProtocolCodec } from '../../protocols/codec'
import type { EventEncoder } from '../../protocols/stream-machine'

/** How many items are kept (oldest dropped first), their total JSON size, and for how long. */
export const ITEM_LIMIT = 20_000
export const ITEM_BYTES = 32 * 1024 * 1024
export const ITEM_TTL_MS = 6 * 3_600_000

type Item = Record<string, unknown>
type Entry = { accountId: number; item: Item; expires: number; size: number }

export type ConvertedItems = {
	/** Remembers the output items of a converted response answered to `accountId`. */
	remember(accountId: number, items: unknown[]): void
	/**
	 * `input` with every `item_reference` this store holds for the account replaced by the item it names, or
	 * `undefined` when nothing was replaced.
	 */
	resolve(accountId: number, input: unknown): unknown[] | undefined
}

export function convertedItems(opts: { limit?: number; bytes?: number; ttlMs?: number; now?: () => number } = {}): ConvertedItems {
	const limit = opts.limit ?? ITEM_LIMIT
	const maxBytes = opts.bytes ?? ITEM_BYTES
	let bytes = 0
	const ttl = opts.ttlMs ?? ITEM_TTL_MS
	const now = opts.now ?? Date.now
	// A Map iterates in insertion order: the first key is the oldest.
	const entries = new Map<string, Entry>()
	const drop = (id: string) => {
		const e = entries.get(id)
		if (!e) return
		bytes -= e.size
		entries.delete(id)
	}
	const lookup = (accountId: number, id: string): Item | undefined => {
		const e = entries.get(id)
		if (!e || e.accountId !== accountId) return undefined
		if (e.expires <= now()) {
			drop(id)
			return undefined
		}
		return e.item
	}
	return {
		remember(accountId, items) {
			for (const item of items) {
				if (!item || typeof item !== 'object') continue
				const { id, status: _status, ...rest } = item as Item
				if (typeof id !== 'string' || !id) continue
				const size = JSON.stringify(rest).length
				if (size > maxBytes) continue
				drop(id)
				entries.set(id, { accountId, item: rest, expires: now() + ttl, size })
				bytes += size
			}
			while (entries.size > limit || bytes > maxBytes) drop(entries.keys().next().value!)
		},
		resolve(accountId, input) {
			if (!Array.isArray(input)) return undefined
			let replaced = false
			const out = input.map((x) => {
				const ref = x as Item | null
				if (!ref || typeof ref !== 'object' || ref.type !== 'item_reference' || typeof ref.id !== 'string') return x
				const item = lookup(accountId, ref.id)
				if (!item) return x
				replaced = true
				return item
			})
			return replaced ? out : undefined
		},
	}
}

/**
 * The Responses codec with its client-side encoders tapped: every output item of a converted answer (the body's
 * `output`, a stream's `response.output_item.done` items) is handed to `remember`.
 */
export function rememberingCodec<C extends ProtocolCodec>(codec: C, remember: (items: unknown[]) => void): C {
	return {
		...codec,
		encodeResponse(res, ctx: EncodeContext) {
			const body = codec.encodeResponse(res, ctx) as { output?: unknown }
			if (Array.isArray(body.output)) remember(body.output)
			return body
		},
		streamEncoder(ctx: EncodeContext): EventEncoder {
			const inner = codec.streamEncoder(ctx)
			return {
				push(event, out) {
					const from = out.length
					inner.push(event, out)
					for (let i = from; i < out.length; i++) {
						const f = out[i]!
						if (f.event !== 'response.output_item.done') continue
						try {
							remember([(JSON.parse(f.data) as { item?: unknown }).item])
						} catch {
							// not ours to judge: the frame goes to the client as encoded
						}
					}
				},
				end: (out) => inner.end(out),
				get done() {
					return inner.done
				},
			}
		},
	}
}
