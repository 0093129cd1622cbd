/**
 * Mistral's prefix completion answers with the prefix itself first: "the role of the prefix message is to force the
 * model to start its answer by the content of the message", and its guide cuts it off with `content[len(prefix):]`
 * (docs.mistral.ai guides/prefix). A client whose prefill is continued (Anthropic's, Gemini's trailing model turn)
 * gets only the continuation from its own vendor, so the repeated prefix is cut from the answer, whole or streamed.
 * An answer that does not start with the prefix is left as it is.
 * @module
 */
import type { StreamEvent } from '../core/events'
import type { ChatResponse } from '../core/ir'
import type { UpstreamCodec } from '../protocols/codec'
import { eachDecoded, type FrameDecoder, mapDecoding } from '../protocols/stream-machine'

/** `codec` as it is, or, for a prefix the upstream repeats, a codec whose decoded answers start after it. */
export function withoutEchoedPrefix(codec: UpstreamCodec, prefix: string | undefined): UpstreamCodec {
	if (!prefix) return codec
	return mapDecoding(codec, (r) => cutEcho(r, prefix), (d) => echoCutDecoder(d, prefix))
}

/** A whole answer with the prefix cut from the start of its first text. */
export function cutEcho(res: ChatResponse, prefix: string): ChatResponse {
	const i = res.content.findIndex((p) => p.type === 'text')
	const first = res.content[i]
	if (first?.type !== 'text' || !first.text.startsWith(prefix)) return res
	const content = [...res.content]
	content[i] = { ...first, text: first.text.slice(prefix.length) }
	return { ...res, content }
}

/**
 * The upstream's stream decoder with the prefix cut from the first text block: its deltas are held while they could
 * still be the prefix, then what follows it is passed on (or all of them, when they turn out not to repeat it).
 */
export function echoCutDecoder(inner: FrameDecoder, prefix: string): FrameDecoder {
	let block: number | undefined
	let held = ''
	let settled = false
	/** Ends the holding: `text` goes on as a delta of the block, unless empty. */
	const settle = (out: StreamEvent[], text: string) => {
		settled = true
		if (text) out.push({ type: 'text_delta', index: block!, text })
	}
	return eachDecoded(inner, (e, out) => {
		if (settled) out.push(e)
		else if (e.type === 'block_start' && e.block.kind === 'text' && block === undefined) {
			block = e.index
			out.push(e)
		} else if (e.type === 'text_delta' && e.index === block) {
			held += e.text
			if (held.length >= prefix.length) settle(out, held.startsWith(prefix) ? held.slice(prefix.length) : held)
			else if (!prefix.startsWith(held)) settle(out, held)
		} else if (e.type === 'block_stop' && e.index === block) {
			// The block ended within the prefix (a cap reached while repeating it): nothing of it was new.
			settle(out, prefix.startsWith(held) ? '' : held)
			out.push(e)
		} else out.push(e)
	})
}
