/**
 * The mocks' "model": a pure function from a vendor-neutral view of the request to the answer, so the three
 * vendors answer the same conversation with the same text, tool calls, stop reason and token counts.
 *
 * Rules (driven by the last user text; see the tests for exact strings):
 * - text `Hello! You said: <last user text>`, or `Tool results: <r1>; <r2>` when the last user turn is tool results,
 *   or `continuation(prefill)` when the request ends with an assistant turn the vendor continues;
 *   `I see N image(s). ` first when the last user turn has images; ` one two STOP three` appended on `#stop`;
 * - `#tools` with tools offered: two parallel calls (first tool `{<key>: 'Paris'}`, second-or-first `{<key>: 'Tokyo'}`),
 *   only the first when the request turned parallel calls off; with `#preface` the calls follow the text `PREFACE_TEXT`
 *   (OpenAI `content` beside `tool_calls`, a text part or block before the calls);
 * - `#call <Name> <json object>` with tool Name offered: one call of Name with those arguments (a scripted agent step);
 * - `#refusal`: the model refuses, `REFUSAL_TEXT` with stop reason refusal (OpenAI's `refusal` field, Anthropic
 *   `stop_reason: "refusal"`, a Responses `refusal` part, Gemini `SAFETY`);
 * - thinking when requested: `Let me think about <last user text>.`;
 * - a forced tool call (`tool_choice` naming a tool, or required / any / ANY), without `#tools`: one call of it (the
 *   named or first tool), arguments sampled from its schema;
 * - a JSON output format (structured.ts): a JSON document satisfying the schema instead of the text;
 * - stop sequences cut the text before the earliest match; `#length` (or a cap below the answer) stops at the cap;
 * - usage in words: input = all request text + 85 per image, output = text + thinking + 2 per tool call,
 *   `#cache` anywhere reports 10 input tokens as cache reads, `#write-cache` 10 as cache writes (Anthropic and
 *   OpenAI, as GPT-5.6 and later do, report writes; Gemini counts them as plain prompt tokens), `#write-cache-1h`
 *   reports those writes as 1-hour ones (Anthropic `cache_creation.ephemeral_1h_input_tokens`), `#write-cache-12h` as
 *   12-hour ones (OpenAI `cache_write_tokens_details.ttl_12h_tokens`), `#audio` 10 uncached input tokens and 5 answer
 *   tokens as audio (OpenAI `*_tokens_details.audio_tokens`, Gemini modality AUDIO), `#image-out` 5 answer tokens as
 *   image output (Gemini `candidatesTokensDetails` modality IMAGE), `#tool-use` 7 tokens that built-in tools fed back
 *   (Gemini's `toolUsePromptTokenCount`, apart from and on top of the prompt; no other vendor reports them).
 * @module
 */

import { type JsonFormat, sampleFor, structuredText } from './structured'
import { countWords } from './text'

/** A tool the request offers; `argKey` is its schema's first string property (or `city`). */
export interface ToolSpec {
	name: string
	argKey: string
	/** Its parameters' JSON schema (for a forced call's arguments). */
	schema?: unknown
}

/** The vendor-neutral reading of a request that the answer depends on. */
export interface Conversation {
	/** Every text that counts as input: system, messages, tool results. */
	inputTexts: string[]
	/** Images anywhere in the request (85 input tokens each). */
	images: number
	lastUserText: string
	lastUserImages: number
	/** Set when the last user turn carries tool results: their texts, in order. */
	toolResults?: string[]
	tools: ToolSpec[]
	stop: string[]
	maxTokens?: number
	thinking: boolean
	/** The request asked for JSON output (structured.ts): the answer is a JSON document instead of the usual text. */
	format?: JsonFormat
	/** The request forces a tool call (`tool_choice` naming a tool, or required / any / ANY): unless `#tools` plans its
	 * two calls, the answer is one call of this tool, its arguments sampled from its schema (structured.ts). */
	forcedCall?: ToolSpec
	/** Parallel calls are off (OpenAI `parallel_tool_calls: false`, Anthropic `disable_parallel_tool_use`; Gemini has no
	 * such switch): `#tools` plans only its first call. */
	singleCall?: boolean
	/** The request ends with an assistant turn the vendor continues (Anthropic's prefill, Gemini's trailing model turn,
	 * DeepSeek's and Mistral's `prefix: true` message): its text. The answer is then `continuation(prefill)`. */
	prefill?: string
}

/**
 * What a model adds to a prefill it continues: the answer holds only this, not the prefill (Mistral repeats the prefill
 * before it). It quotes the prefill as received, so a test sees what reached the vendor.
 * @example continuation('The answer is') === ' continued after "The answer is"'
 */
export const continuation = (prefill: string): string => ` continued after ${JSON.stringify(prefill)}`

export interface PlannedCall {
	name: string
	args: Record<string, unknown>
	/** `JSON.stringify(args)` */
	json: string
}

export type Finish = 'stop' | 'length' | 'tool_calls' | 'stop_sequence' | 'refusal'

/** What the model says when it refuses (`#refusal`). */
export const REFUSAL_TEXT = "I'm sorry, I can't help with that."


export interface PlanUsage {
	/** All input tokens, cache reads included. */
	input: number
	/** All output tokens, reasoning included. */
	output: number
	reasoning: number
	cached: number
	/** Input tokens written to the prompt cache (part of `input`, apart from `cached`); set on `#write-cache` only. */
	cacheWrite?: number
	/** The part of `cacheWrite` written for longer than the default: one hour (`#write-cache-1h`), twelve on OpenAI (`#write-cache-12h`). */
	cacheWriteLong?: number
	/** Uncached input tokens that were audio, and answer tokens that were audio or image (`#audio`, `#image-out`). */
	audioInput?: number
	audioOutput?: number
	imageOutput?: number
	/** The part of `cached` that was audio (`#cached-audio`, which is also `#cache`): Gemini's `cacheTokensDetails` AUDIO. */
	cachedAudio?: number
	/** Tokens built-in tools fed back, beyond `input` (`#tool-use`): Gemini's `toolUsePromptTokenCount`. */
	toolUse?: number
}

/** The tokens `#tool-use` reports as fed back by built-in tools. */
export const TOOL_USE_TOKENS = 7

export interface Plan {
	thinking: string
	text: string
	calls: PlannedCall[]
	finish: Finish
	stopSequence?: string
	usage: PlanUsage
}

/** The text a `#preface` answer says before its tool calls. */
export const PREFACE_TEXT = 'Let me check. STOP Calling the tools now.'

/** Input tokens of a conversation (also what the count-tokens endpoints return). */
export function inputTokens(c: Pick<Conversation, 'inputTexts' | 'images'>): number {
	let n = c.images * 85
	for (const t of c.inputTexts) n += countWords(t)
	return n
}

/** `I see 1 image. ` / `I see 2 images. ` */
const imagePrefix = (n: number): string => (n > 0 ? `I see ${n} image${n === 1 ? '' : 's'}. ` : '')

/** The answer text before stop sequences and caps. */
export function baseText(c: Conversation): string {
	if (c.prefill !== undefined && !c.toolResults) return continuation(c.prefill)
	let text = c.toolResults ? `Tool results: ${c.toolResults.join('; ')}` : `Hello! You said: ${c.lastUserText}`
	text = imagePrefix(c.lastUserImages) + text
	if (c.lastUserText.includes('#stop')) text += ' one two STOP three'
	return text
}

/** First `n` words of `text`, padded with `more` when the text is shorter (the `#length` answer). */
function capWords(text: string, n: number): string {
	const words = text.split(/\s+/).filter(Boolean)
	while (words.length < n) words.push('more')
	return words.slice(0, n).join(' ')
}

function plannedCalls(c: Conversation): PlannedCall[] {
	const first = c.tools[0]
	const second = c.tools[1] ?? first
	return [
		{ name: first.name, args: { [first.argKey]: 'Paris' } },
		{ name: second.name, args: { [second.argKey]: 'Tokyo' } },
	].map((call) => ({ ...call, json: JSON.stringify(call.args) }))
}

/** `#call <Name> <json object>` (the JSON to the end of its line) naming an offered tool: that one call. */
function scriptedCall(c: Conversation): PlannedCall | undefined {
	const m = /#call (\S+) (\{.*\})/.exec(c.lastUserText)
	if (!m || !c.tools.some((t) => t.name === m[1])) return undefined
	// Not JSON as written (a CLI that quotes the prompt and escapes it): no scripted call, rather than a 500.
	let args: Record<string, unknown>
	try {
		args = JSON.parse(m[2]!) as Record<string, unknown>
	} catch {
		return undefined
	}
	return { name: m[1]!, args, json: JSON.stringify(args) }
}

/**
 * Computes the answer to a conversation.
 * @example plan({ inputTexts: ['hi'], images: 0, lastUserText: 'hi', lastUserImages: 0, tools: [], stop: [], thinking: false }).text
 * // 'Hello! You said: hi'
 */
export function plan(c: Conversation): Plan {
	const thinking = c.thinking ? `Let me think about ${c.lastUserText}.` : ''
	const input = inputTokens(c)
	const cached = c.inputTexts.some((t) => t.includes('#cache')) ? Math.min(10, input) : 0
	const cacheWrite = c.inputTexts.some((t) => t.includes('#write-cache')) ? Math.min(10, input - cached) : 0
	const reasoning = countWords(thinking)
	const tagged = (tag: string) => c.inputTexts.some((t) => t.includes(tag))
	const audioInput = tagged('#audio') ? Math.min(10, input - cached - cacheWrite) : 0
	const usage = (outputWords: number): PlanUsage => {
		const audioOutput = tagged('#audio') ? Math.min(5, outputWords) : 0
		const imageOutput = tagged('#image-out') ? Math.min(5, outputWords - audioOutput) : 0
		return {
			input,
			output: outputWords + reasoning,
			reasoning,
			cached,
			...(cacheWrite > 0 && { cacheWrite }),
			...(cacheWrite > 0 && (tagged('#write-cache-1h') || tagged('#write-cache-12h')) && { cacheWriteLong: cacheWrite }),
			...(audioInput > 0 && { audioInput }),
			...(audioOutput > 0 && { audioOutput }),
			...(imageOutput > 0 && { imageOutput }),
			...(cached > 0 && tagged('#cached-audio') && { cachedAudio: cached }),
			...(tagged('#tool-use') && { toolUse: TOOL_USE_TOKENS }),
		}
	}

	if (c.lastUserText.includes('#refusal')) return { thinking, text: REFUSAL_TEXT, calls: [], finish: 'refusal', usage: usage(countWords(REFUSAL_TEXT)) }
	const scripted = c.toolResults ? undefined : scriptedCall(c)
	if (scripted) return { thinking, text: '', calls: [scripted], finish: 'tool_calls', usage: usage(2) }
	if (!c.toolResults && c.tools.length > 0 && c.lastUserText.includes('#tools')) {
		const calls = c.singleCall ? plannedCalls(c).slice(0, 1) : plannedCalls(c)
		const text = c.lastUserText.includes('#preface') ? PREFACE_TEXT : ''
		return { thinking, text, calls, finish: 'tool_calls', usage: usage(calls.length * 2 + countWords(text)) }
	}
	if (!c.toolResults && c.forcedCall) {
		const args = sampleFor(c.forcedCall.schema, c.lastUserText) as Record<string, unknown>
		return { thinking, text: '', calls: [{ name: c.forcedCall.name, args, json: JSON.stringify(args) }], finish: 'tool_calls', usage: usage(2) }
	}
	let text = c.format && !c.toolResults ? structuredText(c.format, c.lastUserText) : baseText(c)
	let finish: Finish = 'stop'
	let stopSequence: string | undefined
	let at = -1
	for (const s of c.stop) {
		const i = s ? text.indexOf(s) : -1
		if (i >= 0 && (at < 0 || i < at)) {
			at = i
			stopSequence = s
		}
	}
	if (at >= 0) {
		text = text.slice(0, at)
		finish = 'stop_sequence'
	}
	const cap = c.lastUserText.includes('#length') ? (c.maxTokens ?? 5) : c.maxTokens
	if (cap !== undefined && (c.lastUserText.includes('#length') || countWords(text) > cap)) {
		text = capWords(text, cap)
		finish = 'length'
		stopSequence = undefined
	}
	return { thinking, text, calls: [], finish, stopSequence, usage: usage(countWords(text)) }
}

/**
 * The first string property of a JSON schema, the key the mock fills in tool arguments (default `city`).
 * @example argKeyOf({ type: 'object', properties: { q: { type: 'string' } } }) // 'q'
 */
export function argKeyOf(schema: unknown): string {
	const props = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties
	if (props && typeof props === 'object') {
		for (const [k, v] of Object.entries(props)) {
			const t = v?.type
			if (typeof t === 'string' ? t.toLowerCase() === 'string' : Array.isArray(t) && t.includes('string')) return k
		}
	}
	return 'city'
}

/** Text of a tool result object (Gemini `functionResponse.response`): a lone string value, else its JSON. */
export function resultText(value: unknown): string {
	if (typeof value === 'string') return value
	if (value && typeof value === 'object' && !Array.isArray(value)) {
		const vals = Object.values(value)
		if (vals.length === 1 && typeof vals[0] === 'string') return vals[0]
	}
	return JSON.stringify(value ?? null)
}

/**
 * The tool a `tool_choice` forces: the named one, or the first offered when any call is required.
 * @example forcedTool([{ name: 'a', argKey: 'city' }], { required: true }) // { name: 'a', argKey: 'city' }
 */
export function forcedTool(tools: ToolSpec[], choice: { required?: boolean; name?: string }): ToolSpec | undefined {
	if (choice.name) return tools.find((t) => t.name === choice.name)
	return choice.required ? tools[0] : undefined
}
