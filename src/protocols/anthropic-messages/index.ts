/**
 * The Anthropic Messages codec (`POST /v1/messages`), used on both sides of the gateway.
 * @module
 */
import type { ProtocolCodec } from '../codec'
import { encodeError, encodeStreamError } from './error'
import type { AnthropicRequest, AnthropicResponse } from './model'
import { decodeRequest, encodeRequest } from './request'
import { decodeResponse, encodeResponse, usageOf } from './response'
import { decodeStream, encodeStream, streamDecoder, streamEncoder } from './stream'
import { unpairedTools } from './tool-pairing'

export const anthropicMessages = {
	name: 'anthropic-messages',
	requiresMaxTokens: true,
	capWithinContext: true,
	// "stop_sequences: each stop sequence must contain non-whitespace" (Anthropic's 400).
	stopRefused: (stop: string) => stop.trim() === '',
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
} satisfies ProtocolCodec<AnthropicRequest, AnthropicResponse>

export { AnthropicRequest, AnthropicResponse, AnthropicErrorBody, AnthropicStreamEvent } from './model'
