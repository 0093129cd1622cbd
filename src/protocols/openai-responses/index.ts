/**
 * The OpenAI Responses codec (`POST /v1/responses`), used for Responses clients of every model. OpenAI channels take
 * such requests verbatim at `{base_url}/responses` (modules/responses), so this codec converts only for Anthropic,
 * Gemini and OpenAI-compatible chat upstreams, and reads usage from the verbatim bodies and streams.
 * @module
 */
import type { ProtocolCodec } from '../codec'
import { encodeError, encodeStreamError } from './error'
import type { ResponsesResponse } from './model'
import { decodeRequest, encodeRequest } from './request'
import { decodeResponse, encodeResponse, usageOf } from './response'
import { decodeStream, encodeStream, streamDecoder, streamEncoder } from './stream'
import { unpairedTools } from './tool-pairing'


export const openaiResponses = {
	name: 'openai-responses',
	// The Responses API has no stop sequences at all.
	stopsTaken: () => 0,
	decodeRequest,
	encodeRequest,
	decodeResponse,
	encodeResponse,
	decodeStream,
	encodeStream,
	streamDecoder,
	streamEncoder,
	unpairedTools,
	encodeError,
	encodeStreamError,
	usageOf,
} satisfies ProtocolCodec<Record<string, unknown>, ResponsesResponse>


export { ResponsesRequest, ResponsesResponse, ResponsesStreamEvent, ResponsesUsage } from './model'
export { unconvertible } from './request'
