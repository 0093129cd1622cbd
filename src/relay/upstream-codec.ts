/**
 * The request and upstream codec of a converted call: what every path that converts a request for another vendor
 * (the chat relay, the gateway's MCP loop) applies in the same way, so none of them sends a tool name the vendor
 * refuses (tool-names.ts) or more tool calls than the client allowed (single-tool-call.ts).
 * @module
 */
import type { ChatRequest } from '../core/ir'
import type { ProtocolCodec } from '../protocols/codec'
import { withFirstToolCallOnly } from './single-tool-call'
import { withPortableToolNames } from './tool-names'

/**
 * `ir` as `codec`'s vendor takes it, and the codec whose decoded answers (whole or streamed) speak the client's terms.
 * @example const { ir: sent, codec } = forUpstream(ir, adapter.protocol); codec.encodeRequest(sent, model)
 */
export function forUpstream(ir: ChatRequest, codec: ProtocolCodec): { ir: ChatRequest; codec: ProtocolCodec } {
	const portable = withPortableToolNames(ir, codec)
	return { ir: portable.ir, codec: withFirstToolCallOnly(portable.ir, portable.codec) }
}
