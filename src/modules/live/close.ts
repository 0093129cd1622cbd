/**
 * How a Live session is refused: as Google's Live endpoint refuses, by closing the socket with a code and a reason
 * text (a WebSocket client cannot read a refused handshake's body, and @google/genai reports the close as "Live
 * connection closed before setup completed (code N): reason"). Google closes 1007 for what is wrong in the request
 * ("Request contains an invalid argument.", an invalid API key) and 1008 for a model it does not serve to the key
 * ("models/… is not found for API version v1beta, or is not supported for bidiGenerateContent."), a permission or a quota.
 * A refused key says what Google's HTTP answer says (protocols/gemini/error.ts): an unknown or expired key 1007 in
 * Google's words, a disabled key or account 1008 (PERMISSION_DENIED).
 * @module
 */
import type { GatewayError } from '../../core/errors'
import { keyRefusalOf } from '../../protocols/gemini/error'

/** A close reason is at most 123 bytes of UTF-8 (RFC 6455 §5.5: a control frame's payload is 125 bytes, 2 of them the code). */
const MAX_REASON_BYTES = 123

export function closeReason(text: string): string {
	const bytes = new TextEncoder().encode(text)
	if (bytes.length <= MAX_REASON_BYTES) return text
	// Cut on a character boundary, with an ellipsis (3 bytes) in place of the rest.
	let end = MAX_REASON_BYTES - 3
	while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
	return `${new TextDecoder().decode(bytes.slice(0, end))}…`
}

/** The close code and reason refusing a session for `err`; `model` as the setup named it (without `models/`). */
export function liveClose(err: GatewayError, model: string, version: string): { code: number; reason: string } {
	// A model served here, but not on a channel that speaks Live: what Google says of a model without bidiGenerateContent.
	if (err.kind === 'invalid_request' && err.param === 'model') return { code: 1008, reason: closeReason(err.message) }
	const key = keyRefusalOf(err)
	if (key) return { code: key.status === 'PERMISSION_DENIED' ? 1008 : 1007, reason: closeReason(key.message ?? err.message) }
	switch (err.kind) {
		case 'invalid_request':
		case 'authentication':
		case 'payload_too_large':
			return { code: 1007, reason: closeReason(err.message) }
		case 'not_found':
			return { code: 1008, reason: closeReason(`models/${model} is not found for API version ${version}, or is not supported for bidiGenerateContent.`) }
		case 'permission':
		case 'insufficient_quota':
		case 'rate_limit':
			return { code: 1008, reason: closeReason(err.message) }
		default:
			// The gateway's or the upstream's failure (no channel could be reached): an internal error, worth a retry.
			return { code: 1011, reason: closeReason(err.message) }
	}
}
