/**
 * An Amazon Bedrock guardrail on a `bedrock` channel (`settings.guardrail_*`: config/channel-settings.ts), applied to
 * every chat call (https://docs.aws.amazon.com/bedrock/latest/userguide/guardrails-use.html):
 * - Claude over InvokeModel: the headers `X-Amzn-Bedrock-GuardrailIdentifier`, `X-Amzn-Bedrock-GuardrailVersion` and
 *   `X-Amzn-Bedrock-Trace` (ENABLED | DISABLED | ENABLED_FULL) (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html),
 *   set with the others, so SigV4 signs them. The async stream mode (`guardrail_stream_mode: async`) goes in the body
 *   of InvokeModelWithResponseStream as `"amazon-bedrock-guardrailConfig": {"streamProcessingMode": "ASYNCHRONOUS"}`
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/guardrails-streaming.html), signed with it; without it Bedrock
 *   scans the stream in sync mode. Whole answers take no stream mode: their body is Claude's alone.
 * - Converse: the body's `guardrailConfig` (UpstreamOptions.guardrail, protocols/bedrock-converse/request.ts), whose
 *   `stopReason: "guardrail_intervened"` the codec reads as a content filter.
 * When the guardrail intervenes, InvokeModel answers 200 with the guardrail's blocked message as Claude's text and
 * `"amazon-bedrock-guardrailAction": "INTERVENED"` beside Claude's members, the trace under `amazon-bedrock-trace` when
 * one was asked. Claude's answer is rewritten here (`guardedJson`, and `guardedEvent` for each streamed event) so that
 * it says `stop_reason: "refusal"`, Anthropic's own word for a declined answer: every client protocol then reads it
 * honestly (OpenAI `content_filter`, Gemini `SAFETY`), the Anthropic fast path too; the two Bedrock members are
 * dropped, the trace because it names the guardrail's policies and what they matched, for Bedrock's invocation logs
 * and not for the caller. An answer is read so on every channel, one without guardrail settings too: a guardrail
 * the AWS account enforces on every call (Bedrock Guardrails enforcements, guardrails-enforcements.html) intervenes
 * the same way without the call naming it. In async mode the model's text may already have streamed when the
 * guardrail intervenes: the stream then ends there, as a refusal, after the text the client already has.
 * @module
 */
import type { UpstreamGuardrail } from '../protocols/codec'
import type { Channel } from '../routing/catalog'
import { stringSetting } from './channel-key-memo'
import { isObject } from '../core/json'

const TRACES = new Set<string>(['enabled', 'disabled', 'enabled_full'])

/**
 * The channel's guardrail, or undefined without one (identifier and version are saved together: channel-settings.ts).
 * @example guardrailOf({ settings: { guardrail_identifier: 'gr1', guardrail_version: 'DRAFT' } } as Channel) // { identifier: 'gr1', version: 'DRAFT' }
 */
export function guardrailOf(ch: Pick<Channel, 'settings'>): UpstreamGuardrail | undefined {
	const identifier = stringSetting(ch, 'guardrail_identifier')
	const version = stringSetting(ch, 'guardrail_version')
	if (!identifier || !version) return undefined
	const trace = stringSetting(ch, 'guardrail_trace')
	const mode = stringSetting(ch, 'guardrail_stream_mode')
	return { identifier, version, ...(trace && TRACES.has(trace) && { trace: trace as NonNullable<UpstreamGuardrail['trace']> }), ...((mode === 'sync' || mode === 'async') && { streamMode: mode }) }
}

/**
 * InvokeModel's guardrail headers for the channel, none without a guardrail. The trace header's values are upper case
 * there (Converse's are lower case).
 * @example guardrailHeaders(ch) // { 'x-amzn-bedrock-guardrailidentifier': 'gr1', 'x-amzn-bedrock-guardrailversion': '1', 'x-amzn-bedrock-trace': 'ENABLED' }
 */
export function guardrailHeaders(ch: Pick<Channel, 'settings'>): Record<string, string> {
	const g = guardrailOf(ch)
	if (!g) return {}
	return {
		'x-amzn-bedrock-guardrailidentifier': g.identifier,
		'x-amzn-bedrock-guardrailversion': g.version,
		...(g.trace && { 'x-amzn-bedrock-trace': g.trace.toUpperCase() }),
	}
}

/** InvokeModel's body member for the guardrail's stream mode, and its async value (guardrails-streaming.html). */
const CONFIG = 'amazon-bedrock-guardrailConfig'
const ASYNC = { streamProcessingMode: 'ASYNCHRONOUS' }

/**
 * Claude's InvokeModelWithResponseStream body (a parsed object) with the channel's async stream mode, when it asks for
 * one; nothing for sync (Bedrock's default) or without a guardrail, whose config Bedrock refuses ("You don't provide a
 * guardrail identifier but you specify the amazon-bedrock-guardrailConfig field").
 * @example withStreamMode(ch, body) // body['amazon-bedrock-guardrailConfig'] = { streamProcessingMode: 'ASYNCHRONOUS' }
 */
export function withStreamMode(ch: Pick<Channel, 'settings'>, body: Record<string, unknown>): void {
	if (guardrailOf(ch)?.streamMode === 'async') body[CONFIG] = { ...ASYNC }
}

const ACTION = 'amazon-bedrock-guardrailAction'
const TRACE = 'amazon-bedrock-trace'
/** Bedrock's own stop reason for a guardrail, reported in Claude's streamed message_delta (langchain-ai/langchain-aws PR #937): an intervention too. */
const INTERVENED_REASON = 'guardrail_intervened'

type Obj = Record<string, unknown>

/** Drops Bedrock's guardrail members from `o`; whether they said the guardrail intervened. */
function dropMembers(o: Obj): boolean {
	const intervened = o[ACTION] === 'INTERVENED'
	delete o[ACTION]
	delete o[TRACE]
	return intervened
}

/**
 * One Claude JSON (a whole answer or a streamed event) without Bedrock's guardrail members, and whether they said the
 * guardrail intervened: on the object itself, or on `message_start`'s message. A JSON that names neither is returned
 * as it came, unparsed (a string check: most answers and events). `stop_reason: "guardrail_intervened"` (the answer's
 * or `message_delta`'s) counts as an intervention and becomes `refusal`; a whole answer that intervened says so too.
 * @example guardedEvent('{"type":"message","stop_reason":"end_turn","amazon-bedrock-guardrailAction":"INTERVENED"}') // { json: '{"type":"message","stop_reason":"refusal"}', intervened: true }
 */
export function guardedEvent(json: string): { json: string; intervened: boolean } {
	if (!json.includes(ACTION) && !json.includes(TRACE) && !json.includes(INTERVENED_REASON)) return { json, intervened: false }
	let o: unknown
	try {
		o = JSON.parse(json)
	} catch {
		// Not JSON: the Anthropic decoder reports it as malformed.
		return { json, intervened: false }
	}
	if (!isObject(o)) return { json, intervened: false }
	let intervened = dropMembers(o)
	if (isObject(o.message)) intervened = dropMembers(o.message) || intervened
	const said = isObject(o.delta) ? o.delta : o
	if (said.stop_reason === INTERVENED_REASON) intervened = true
	if (intervened && (o.type === 'message' || said.stop_reason === INTERVENED_REASON)) said.stop_reason = 'refusal'
	return { json: JSON.stringify(o), intervened }
}

/**
 * A `message_delta` event's JSON saying `stop_reason: "refusal"`, for a stream whose guardrail intervened before it
 * ended; anything else as it came.
 * @example asRefusal('{"type":"message_delta","delta":{"stop_reason":"end_turn"}}') === '{"type":"message_delta","delta":{"stop_reason":"refusal"}}'
 */
export function asRefusal(json: string): string {
	try {
		const o = JSON.parse(json) as unknown
		if (!isObject(o) || !isObject(o.delta)) return json
		o.delta.stop_reason = 'refusal'
		return JSON.stringify(o)
	} catch {
		return json
	}
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * A whole InvokeModel answer (2xx JSON) through `guardedEvent`: read whole (the relay reads it so anyway), sent as it
 * came when it names no guardrail member. Cancelling it cancels the upstream body.
 */
export function guardedJson(res: Response): Response {
	if (!res.ok || !res.body) return res
	const reader = res.body.getReader()
	const headers = new Headers(res.headers)
	headers.delete('content-length')
	const body = new ReadableStream<Uint8Array>({
		async pull(ctl) {
			const parts: Uint8Array[] = []
			let size = 0
			while (true) {
				const { done, value } = await reader.read()
				if (done) break
				parts.push(value)
				size += value.byteLength
			}
			const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
			const text = decoder.decode(bytes)
			const seen = guardedEvent(text)
			ctl.enqueue(seen.json === text ? bytes : encoder.encode(seen.json))
			ctl.close()
		},
		cancel: (reason) => reader.cancel(reason),
	})
	return new Response(body, { status: res.status, statusText: res.statusText, headers })
}
