/** Stream codec of the Responses API: decode (upstream) and encode (client). */
export { decodeStream } from './stream-decode'
export { encodeStream } from './stream-encode'
