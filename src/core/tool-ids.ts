/**
 * Gemini attaches a `thoughtSignature` to function calls and rejects the next turn when it is missing
 * ("Function call is missing a thought_signature"). OpenAI and Anthropic clients only send back the tool-call id,
 * so the signature travels inside the id: `<id>__ts_<base64url(signature)>`. The alphabet stays within Anthropic's
 * tool_use id pattern ^[a-zA-Z0-9_-]+$.
 * @module
 */

const MARK = '__ts_'

const toBase64Url = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
const fromBase64Url = (s: string) => {
	const b64 = s.replace(/-/g, '+').replace(/_/g, '/')
	return b64 + '='.repeat((4 - (b64.length % 4)) % 4)
}

/**
 * @example packToolCallId('call_1', 'c2ln') === 'call_1__ts_c2ln'
 * @param signature standard base64 as Gemini sends it
 */
export function packToolCallId(id: string, signature?: string): string {
	return signature ? `${id}${MARK}${toBase64Url(signature)}` : id
}

/** @example unpackToolCallId('call_1__ts_c2ln') → { id: 'call_1', signature: 'c2ln' } */
export function unpackToolCallId(packed: string): { id: string; signature?: string } {
	const at = packed.indexOf(MARK)
	if (at === -1) return { id: packed }
	return { id: packed.slice(0, at), signature: fromBase64Url(packed.slice(at + MARK.length)) }
}

/**
 * The id without a packed signature, with no object allocated when there is none (the common case: agents resend
 * every earlier call's id on each turn).
 * @example plainToolCallId('call_1__ts_c2ln') === 'call_1'
 */
export function plainToolCallId(packed: string): string {
	const at = packed.indexOf(MARK)
	return at === -1 ? packed : packed.slice(0, at)
}

/** OpenAI's longest tool call id ("string_above_max_length" past it, on the call and on its result alike). */
const OPENAI_ID_MAX = 40

/**
 * The id a tool call goes to an OpenAI upstream under: its own when short enough, else a short one made from it, the
 * same for the call and its result. A Gemini call's id carries its thought signature (90 characters and more), and other
 * vendors' ids can be long too (Responses `fc_…`); OpenAI needs neither, and the client keeps the full id.
 * @example openaiToolCallId('call_1') === 'call_1'
 */
export function openaiToolCallId(id: string): string {
	return id.length <= OPENAI_ID_MAX ? id : `call_${Bun.hash(id).toString(36)}`
}

const ALNUM9 = /^[A-Za-z0-9]{9}$/

/**
 * The id for upstreams that take only nine letters or digits (Mistral: "Tool call id was call_… but must be a-z, A-Z,
 * 0-9, with a length of 9"): its own when it is one, else nine made from it, the same for the call and its result.
 * @example alnum9ToolCallId('toolu_01A') // e.g. '0k3j5x9qa'
 */
export function alnum9ToolCallId(id: string): string {
	return ALNUM9.test(id) ? id : Bun.hash(id).toString(36).padStart(9, '0').slice(-9)
}
