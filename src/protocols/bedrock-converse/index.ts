/**
 * Amazon Bedrock's Converse API (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html),
 * the one API Bedrock serves every model over (Nova, Llama, Mistral, DeepSeek, Cohere, gpt-oss, Qwen…): an upstream
 * protocol only. No client speaks it, so it is an UpstreamCodec: a request is encoded for it, and its answers, whole
 * and streamed (ConverseStream, re-framed from AWS event-stream as SSE by the Bedrock adapter), decoded.
 * @module
 */
import type { UpstreamCodec } from '../codec'
import { encodeRequest } from './request'
import { decodeResponse, usageOf } from './response'
import { decodeStream, streamDecoder } from './stream'

export const bedrockConverse = {
	name: 'bedrock-converse',
	encodeRequest,
	decodeResponse: (body) => decodeResponse(body),
	decodeStream,
	streamDecoder: () => streamDecoder(),
	usageOf,
} satisfies UpstreamCodec

export { converseFamily } from './family'
export { streamException } from './stream'
