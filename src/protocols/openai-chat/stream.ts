/**
 * Streaming for OpenAI chat completions: upstream chunks → canonical events (stream-decode.ts) and canonical
 * events → client chunks (stream-encode.ts).
 * @module
 */
export { decodeStream, streamDecoder } from './stream-decode'
export { encodeStream, streamEncoder } from './stream-encode'
