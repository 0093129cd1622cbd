/** Stream codec of the Responses API: decode (upstream) and encode (client). */
export { decodeStream, streamDecoder } from './stream-decode'
export { encodeStream, streamEncoder } from './stream-encode'
