/**
 * Where a thinking signature came from. Anthropic verifies the `signature` of every thinking block it is sent and
 * refuses the whole request over one it did not issue ("Invalid `signature` in `thinking` block",
 * https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking), while Gemini needs its
 * own `thoughtSignature` back on the part it came on (https://ai.google.dev/gemini-api/docs/thought-signatures).
 * Anthropic and chat clients show every vendor's signature in the same field, so a signature that Anthropic did not
 * make carries an origin tag there, and the gateway reads the tag when the client sends the history back:
 *
 * - in the canonical model (`ThinkingPart.signature`, `signature_delta`), an Anthropic signature is verbatim, byte for
 *   byte both ways, and any other vendor's is tagged: the Gemini decoders tag what they read from Gemini, and the
 *   Anthropic and chat codecs pass signatures through untouched, so clients keep the tag;
 * - to an Anthropic upstream (converted path, fast path, count_tokens), thinking with a tagged signature is left out
 *   like unsigned thinking; to a Gemini upstream the tag comes off and the signature goes back on its kind of part.
 *
 * Gemini clients see it the other way round (protocols/gemini/signatures.ts): like a client of Google's, they get
 * Gemini's signatures as Gemini made them, so there the signature that carries a tag is Anthropic's (`anthropic`).
 * The Gemini codec takes that tag off when the client sends the history back and tags the client's untagged
 * signatures as Gemini's, so in the canonical model the rule above holds whatever the client's protocol. The
 * `anthropic` tag is never in the canonical model.
 *
 * Tag format: the base64 of `sbsig:` plus a six-character code for the origin and the part it was on, so the tag is
 * 16 base64 characters with no padding, and a tagged base64 signature is still base64 (as Gemini's redacted-thinking
 * prefix in gemini/read.ts): opaque to clients, like any signature. `sbsig:` is the mark the Responses route puts on
 * the gateway's own reasoning items (openai-responses/reasoning.ts). Every tag starts with `c2JzaWc6` (base64 of
 * `sbsig:`), which decodes to no Anthropic signature's first bytes.
 *
 * One more tag marks no vendor's signature but thinking a Gemini client did not ask to see, carried whole in a
 * `thoughtSignature` of the answer (protocols/gemini/carried-thinking.ts): `CARRIED_THINKING_TAG`. It starts the same
 * way, so every place that tells the gateway's signatures from Gemini's (`isForeignSignature`) knows it too.
 * @module
 */

/**
 * The origins a tag names: Gemini, from a text part (or an empty one) or from a `thought: true` part; Anthropic, as
 * Gemini clients are shown its signatures (never in the canonical model, where Anthropic's are untagged); a model
 * behind Bedrock's Converse API.
 */
export type SignatureOrigin = 'gemini-text' | 'gemini-thought' | 'anthropic' | 'converse'

/** The origins of Gemini's own signatures. */
export type GeminiOrigin = Extract<SignatureOrigin, 'gemini-text' | 'gemini-thought'>

/** base64(`sbsig:hd-th1`): thinking hidden from a Gemini client, carried in a `thoughtSignature` (version 1). */
export const CARRIED_THINKING_TAG = 'c2JzaWc6aGQtdGgx'

/**
 * base64(`sbsig:no-sig`): the signature Anthropic clients are shown on thinking no vendor signed (OpenAI-compatible
 * reasoning, Gemini's thought text). Anthropic signs every thinking block, and clients of its API replay one with an
 * empty signature as plain text (pi) or not at all, so the model would read its reasoning back as words it said. The
 * Anthropic codec takes it off again (the thinking is unsigned in the canonical model); being a tag, it is left out
 * toward Anthropic on the fast path like every signature Anthropic did not issue.
 */
export const UNSIGNED_THINKING_TAG = 'c2JzaWc6bm8tc2ln'

/** base64(`sbsig:`): the start of every origin tag. */
const TAG_START = 'c2JzaWc6'

/**
 * base64(`sbsig:gm-txt`), base64(`sbsig:gm-tht`), base64(`sbsig:an-sig`) and base64(`sbsig:cv-sig`): the last for a
 * `reasoningText.signature` a model gave over Bedrock's Converse API (protocols/bedrock-converse), sent back only there.
 */
const TAGS: Record<SignatureOrigin, string> = { 'gemini-text': 'c2JzaWc6Z20tdHh0', 'gemini-thought': 'c2JzaWc6Z20tdGh0', anthropic: 'c2JzaWc6YW4tc2ln', converse: 'c2JzaWc6Y3Ytc2ln' }

/**
 * A vendor's signature with its origin tag, as the canonical model and Anthropic and chat clients carry it.
 * @example tagSignature('gemini-text', 'R0VN') === 'c2JzaWc6Z20tdHh0R0VN'
 */
export const tagSignature = (origin: SignatureOrigin, signature: string): string => TAGS[origin] + signature

/**
 * Whether a signature carries an origin tag, that is, in the canonical model, whether a vendor other than Anthropic
 * made it: Anthropic's own signatures (and unknown ones) are untagged, and no tagged one verifies at Anthropic.
 * @example isForeignSignature('c2JzaWc6Z20tdHh0R0VN') === true
 */
export const isForeignSignature = (signature: string): boolean => signature.startsWith(TAG_START)

/**
 * The origin and the vendor's own signature behind a tag, or undefined for an untagged signature.
 * @example untagSignature('c2JzaWc6Z20tdHh0R0VN') // { origin: 'gemini-text', signature: 'R0VN' }
 */
export function untagSignature(signature: string): { origin: SignatureOrigin; signature: string } | undefined {
	if (!signature.startsWith(TAG_START)) return undefined
	for (const origin of Object.keys(TAGS) as SignatureOrigin[])
		if (signature.startsWith(TAGS[origin])) return { origin, signature: signature.slice(TAGS[origin].length) }
	return undefined
}

/**
 * Whether an origin is Gemini's (either kind of part).
 * @example isGeminiOrigin('gemini-text') === true
 */
export const isGeminiOrigin = (origin: SignatureOrigin | undefined): origin is GeminiOrigin => origin === 'gemini-text' || origin === 'gemini-thought'
