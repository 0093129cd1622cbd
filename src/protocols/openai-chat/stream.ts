/**
 * Streaming for OpenAI chat completions: upstream chunks → canonical events (stream-decode.ts) and canonical
 * events → client chunks (stream-encode.ts).
 * @module
 */
export { decodeStream } from './stream-decode'
export { encodeStream } from './stream-encode'
