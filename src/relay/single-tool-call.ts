/**
 * `parallel_tool_calls: false` (OpenAI; Anthropic `disable_parallel_tool_use`) for an upstream that has no such
 * switch: Gemini's `toolConfig.functionCallingConfig` is `mode` and `allowedFunctionNames` only
 * (https://ai.google.dev/api/caching#FunctionCallingConfig), and Gemini may answer several functionCall parts at once.
 * A client that turned parallel calls off runs one call per turn and may not handle more, so it gets the first call
 * of the answer; the later ones are left out (still billed: the upstream produced them), and the blocks after them
 * renumbered so that block indexes stay dense. The first call keeps its Gemini thought signature, which rides on it.
 * @module
 */
import type { ChatRequest, ChatResponse } from '../core/ir'
import type { UpstreamCodec, ProtocolName } from '../protocols/codec'
import { eachDecoded, type FrameDecoder, mapDecoding } from '../protocols/stream-machine'

/** The upstream protocol cannot be told to make at most one call (Gemini, Bedrock's Converse), and the request asked for that. */
export const keepsFirstToolCallOnly = (req: Pick<ChatRequest, 'parallelToolCalls'>, upstream: ProtocolName): boolean =>
	req.parallelToolCalls === false && (upstream === 'gemini' || upstream === 'bedrock-converse')

/** `codec` as it is, or, when the request asked for one call and the upstream cannot be told so, a codec whose decoded answers (whole or streamed) carry the first call only. */
export function withFirstToolCallOnly(ir: Pick<ChatRequest, 'parallelToolCalls'>, codec: UpstreamCodec): UpstreamCodec {
	if (!keepsFirstToolCallOnly(ir, codec.name)) return codec
	return mapDecoding(codec, firstToolCallOnly, firstToolCallOnlyDecoder)
}

/** A whole answer with its tool calls after the first left out. */
export function firstToolCallOnly(res: ChatResponse): ChatResponse {
	let calls = 0
	const content = res.content.filter((p) => p.type !== 'tool_call' || calls++ === 0)
	return calls > 1 ? { ...res, content } : res
}

/**
 * The upstream's stream decoder with the blocks of tool calls after the first dropped and the other blocks'
 * indexes renumbered from 0 in order.
 */
export function firstToolCallOnlyDecoder(inner: FrameDecoder): FrameDecoder {
	let calls = 0
	let next = 0
	/** Upstream block index → the client's, for the blocks kept; dropped ones are absent. */
	const kept = new Map<number, number>()
	return eachDecoded(inner, (e, out) => {
		if (e.type === 'block_start') {
			if (e.block.kind === 'tool_call' && calls++ > 0) return
			kept.set(e.index, next)
			out.push({ ...e, index: next++ })
		} else if ('index' in e) {
			const at = kept.get(e.index)
			if (at !== undefined) out.push({ ...e, index: at })
		} else out.push(e)
	})
}
