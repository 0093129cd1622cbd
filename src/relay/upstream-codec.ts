/**
 * The request and upstream codec of a converted call: what every path that converts a request for another vendor
 * (the chat relay, the gateway's MCP loop) applies in the same way, so none of them sends a tool name the vendor
 * refuses (tool-names.ts) or more tool calls than the client allowed (single-tool-call.ts).
 * @module
 */
import type { ChatRequest } from '../core/ir'
import type { GatewayError } from '../core/errors'
import type { ProtocolCodec, ProtocolName, UpstreamCodec } from '../protocols/codec'
import { continuedPrefill } from '../protocols/final-turn'
import type { ChatAdapter } from '../providers/adapter'
import type { Channel } from '../routing/catalog'
import { type Budget, withUpstreamCap } from './budget'
import type { ChatCall } from './chat'
import { inlineImageUrls } from './images'
import { withFirstToolCallOnly } from './single-tool-call'
import { withPortableToolNames } from './tool-names'
import { withoutEchoedPrefix } from './echoed-prefix'
import { withAutoCache } from './auto-cache'

/**
 * `ir` as `codec`'s vendor takes it, and the codec whose decoded answers (whole or streamed) speak the client's terms.
 * @example const { ir: sent, codec } = forUpstream(ir, adapter.protocol); codec.encodeRequest(sent, model)
 */
export function forUpstream(ir: ChatRequest, codec: UpstreamCodec): { ir: ChatRequest; codec: UpstreamCodec } {
	const portable = withPortableToolNames(ir, codec)
	return { ir: portable.ir, codec: withFirstToolCallOnly(portable.ir, portable.codec) }
}

/** Protocols that take images and documents as bytes only (Gemini's two APIs, Bedrock's Converse): URLs are fetched and inlined. */
const INLINED = new Set<ProtocolName>(['gemini', 'gemini-interactions', 'bedrock-converse'])

/** Whether `codec`'s vendor takes files as bytes only, so the URLs a request names are fetched (under the SSRF guard) for it. */
export const takesBytesOnly = (codec: UpstreamCodec): boolean => INLINED.has(codec.name)

/**
 * A broken tool-call pairing in the client's words: another vendor's refusal would name its own fields, and a count
 * (modules/count-tokens) must refuse what the request would. A thread's earlier turns are the vendor's: the body alone
 * cannot tell, so a body naming one is not judged.
 */
export const unpairedCalls = (client: ProtocolCodec, body: Record<string, unknown>, thread: boolean): GatewayError | undefined =>
	thread ? undefined : client.unpairedTools?.(body)

/**
 * The body of a converted request for `adapter`'s vendor, and the codec that reads its answers: the cap the fast path
 * would send (the client's, or one the budget imposes; none otherwise, the vendor's default), except to a protocol
 * that requires one (Anthropic), which gets the cap reserved for; an OpenAI client's prompt cached where asked (auto-cache.ts); images inlined for Gemini (either API) and Converse; tool names it takes.
 * Throws GatewayError for a request the vendor cannot take.
 */
export async function convertedBody(call: ChatCall, ch: Channel, adapter: ChatAdapter, budget: Budget, upstreamModel: string, request: ChatRequest): Promise<{ body: string; codec: UpstreamCodec }> {
	const unpaired = unpairedCalls(call.client, call.body, call.thread !== undefined)
	if (unpaired) throw unpaired
	let ir = withAutoCache(withUpstreamCap(request, budget, adapter.protocol.requiresMaxTokens === true), call.client.name, ch)
	if (takesBytesOnly(adapter.protocol)) ir = await inlineImageUrls(ir, { allow: call.svc.env.fetchAllow }, call.svc.env.maxFetchedUrls)
	// OpenAI's chat completions take a document as data or a file id, never by URL (an Anthropic `url` document).
	else if (adapter.protocol.name === 'openai-chat') ir = await inlineImageUrls(ir, { allow: call.svc.env.fetchAllow }, call.svc.env.maxFetchedUrls, 'documents')
	return encodeFor(ch, adapter, upstreamModel, forUpstream(ir, adapter.protocol))
}

/**
 * `sent` (forUpstream's) as the body for the channel, and the codec that reads its answers: a prefill the vendor repeats
 * before continuing it (Mistral) is cut from them (echoed-prefix.ts). Throws GatewayError for a request the vendor cannot take.
 */
export function encodeFor(ch: Channel, adapter: ChatAdapter, upstreamModel: string, sent: { ir: ChatRequest; codec: UpstreamCodec }): { body: string; codec: UpstreamCodec } {
	const options = adapter.upstreamOptions?.(ch, upstreamModel)
	const body = JSON.stringify(sent.codec.encodeRequest(sent.ir, upstreamModel, options))
	return { body, codec: options?.prefix === 'echoed' ? withoutEchoedPrefix(sent.codec, continuedPrefill(sent.ir)) : sent.codec }
}
