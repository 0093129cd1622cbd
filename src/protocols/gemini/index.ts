/**
 * The Gemini generateContent codec (https://ai.google.dev/api/generate-content), used for Gemini-native clients
 * (`/v1beta/models/{model}:generateContent`) and for Gemini upstreams. The model and the stream flag live in the
 * URL, not the body: see `geminiPath`.
 * @module
 */
import type { ProtocolCodec } from '../codec'
import { choicesEncoder, encodeChoices } from './choices'
import { encodeError, encodeStreamError } from './error'
import type { GeminiRequest, GeminiResponse } from './model'
import { decodeRequest, encodeRequest } from './request'
import { decodeResponse, encodeResponse, usageOf } from './response'
import { decodeStream, encodeStream, streamDecoder, streamEncoder } from './stream'
import { unpairedTools } from './tool-pairing'
import { TIER_HEADER } from './usage'
import { MAX_CANDIDATES } from './config'

export const gemini = {
	name: 'gemini',
	severalAnswers: true,
	mostAnswers: MAX_CANDIDATES,
	// `generationConfig.stopSequences`: "The set of character sequences (up to 5) that will stop output generation"
	// (https://ai.google.dev/api/generate-content#generationconfig).
	stopsTaken: () => 5,
	tierHeader: TIER_HEADER,
	decodeRequest,
	encodeRequest,
	decodeResponse,
	encodeResponse,
	decodeStream,
	encodeStream,
	streamDecoder,
	streamEncoder,
	encodeChoices,
	choicesEncoder,
	unpairedTools,
	encodeError,
	encodeStreamError,
	usageOf,
} satisfies ProtocolCodec<GeminiRequest, GeminiResponse>

export { errorDetails, geminiStatusOf } from './error'
export { GeminiRequest, GeminiResponse, GeminiStreamChunk, GeminiErrorBody } from './model'
export { geminiPath } from './request'
export { geminiSchemaToJsonSchema, sanitiseSchema } from './schema-sanitise'
