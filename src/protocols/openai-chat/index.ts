/**
 * The OpenAI chat-completions codec (`POST /v1/chat/completions`), used for OpenAI clients and for every
 * OpenAI-compatible upstream (OpenAI, DeepSeek, OpenRouter, vLLM, Ollama…).
 * @module
 */
import type { ProtocolCodec } from '../codec'
import { choicesEncoder, encodeChoices } from './choices'
import { encodeError, encodeStreamError } from './error'
import type { OpenAIChatCompletion, OpenAIChatRequest } from './model'
import { decodeRequest, encodeRequest, stopsTaken } from './request'
import { decodeResponse, encodeResponse, usageOf } from './response'
import { decodeStream, encodeStream, streamDecoder, streamEncoder } from './stream'
import { unpairedTools } from './tool-pairing'

export const openaiChat = {
	name: 'openai-chat',
	severalAnswers: true,
	stopsTaken,
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
} satisfies ProtocolCodec<OpenAIChatRequest, OpenAIChatCompletion>

export { OpenAIChatRequest, OpenAIChatCompletion, OpenAIChatCompletionChunk, OpenAIErrorBody } from './model'
export { includeUsageOf, EXTRA_PROTOCOL_KEY } from './request'
export { errorKindOf } from './error'
