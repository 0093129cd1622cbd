/**
 * Amazon Bedrock guardrails for the mock (https://docs.aws.amazon.com/bedrock/latest/userguide/guardrails-use.html),
 * written from AWS's documented shapes, apart from the gateway's code:
 * - InvokeModel takes the guardrail in the headers `X-Amzn-Bedrock-GuardrailIdentifier`, `X-Amzn-Bedrock-GuardrailVersion`
 *   and `X-Amzn-Bedrock-Trace` (ENABLED | DISABLED | ENABLED_FULL); Converse in the body's `guardrailConfig`
 *   (`trace` in lower case, `streamProcessingMode` sync | async on ConverseStream only). An identifier without its
 *   version, a guardrail or version the account does not have, or a value outside those lists is a 400
 *   ValidationException. The mock's own, stricter rule: guardrail headers of a SigV4 request must be among its
 *   SignedHeaders (so a test proves the gateway signs them).
 * - A guardrail intervenes when the prompt names its trigger word: the model is not called; the answer is the
 *   guardrail's blocked message. InvokeModel's answer (Claude's shape) says `"amazon-bedrock-guardrailAction":
 *   "INTERVENED"` with `stop_reason: "end_turn"`, and `amazon-bedrock-trace` when a trace was asked; streamed, the
 *   member comes on the last event (with the invocation metrics), the latest place a reader must still find it.
 *   Converse's says `stopReason: "guardrail_intervened"`, `trace` when asked (on `metadata` when streamed).
 * - A guardrail with an `outputTrigger` also scans Claude's answer over InvokeModel (the model is called; its tokens
 *   are billed): whole, the answer becomes the blocked message, `"amazon-bedrock-guardrailAction": "INTERVENED"`. A
 *   stream is scanned in sync mode, Bedrock's default (guardrails-streaming.html): buffered, and when the answer names
 *   the word the client gets only the blocked message. Async mode is taken only as the docs say to ask it, the body's
 *   `"amazon-bedrock-guardrailConfig": {"streamProcessingMode": "ASYNCHRONOUS"}`: the model's events go out as they
 *   come, up to and including the text delta where the word appears, then the text block closes and the stream ends
 *   with `message_delta` saying `stop_reason: "guardrail_intervened"` (Bedrock's word: langchain-ai/langchain-aws#937)
 *   and `message_stop` carrying the action. The config without the guardrail headers is a 400 ValidationException
 *   (InvokeModel's API reference); the mock's own, stricter rule: it is refused on `/invoke`, which streams nothing.
 * - An account-level enforced guardrail (`enforced`, guardrails-enforcements.html) applies to every call, InvokeModel
 *   and Converse alike, whatever the request names, and intervenes as above.
 * @module
 */
import { asArr, asObj, asStr, type Obj } from '../shared/json'
import { converseEvent } from './converse'
import { chunkMessage } from './event-stream'

/** A guardrail of the mock's account: its versions, the word that makes it intervene, and what it then answers. */
export type MockGuardrail = { versions: string[]; trigger: string; blocked?: string; outputTrigger?: string }

export const BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.'

/** What the request asked of a guardrail, or why Bedrock refuses it. */
export type GuardrailRead = { guard?: { id: string; trigger: string; blocked: string; trace: boolean; outputTrigger?: string } } | Invalid

type Invalid = { invalid: { status: number; type: string; message: string } }
const invalid = (message: string): Invalid => ({ invalid: { status: 400, type: 'ValidationException', message } })

function known(guardrails: Record<string, MockGuardrail>, id: string, version: string, trace: boolean): GuardrailRead {
	const g = guardrails[id]
	if (!g || !g.versions.includes(version)) return invalid('The guardrail identifier or version provided in the request does not exist.')
	return { guard: { id, trigger: g.trigger.toLowerCase(), blocked: g.blocked ?? BLOCKED_MESSAGE, trace, ...(g.outputTrigger && { outputTrigger: g.outputTrigger.toLowerCase() }) } }
}

/** The account's enforced guardrail (its identifier in `guardrails`), applied at its first version, no trace asked. */
export function enforcedGuard(guardrails: Record<string, MockGuardrail>, id: string | undefined): Guard | undefined {
	const g = id === undefined ? undefined : guardrails[id]
	if (!g) return undefined
	const read = known(guardrails, id!, g.versions[0]!, false)
	return 'guard' in read ? read.guard : undefined
}

/** InvokeModel's body member for the stream mode (guardrails-streaming.html). */
export const STREAM_CONFIG = 'amazon-bedrock-guardrailConfig'

/**
 * The body's `amazon-bedrock-guardrailConfig`, checked: whether the stream is scanned asynchronously. Refused without
 * a guardrail in the headers (InvokeModel's API reference), and on `/invoke` (the mock's stricter rule).
 */
export function readStreamMode(body: Obj, guarded: boolean, streamed: boolean): { async: boolean } | Invalid {
	if (!(STREAM_CONFIG in body)) return { async: false }
	if (!guarded) return invalid("You don't provide a guardrail identifier but you specify the amazon-bedrock-guardrailConfig field in the request body.")
	if (!streamed) return invalid('(mock) amazon-bedrock-guardrailConfig sets the stream processing mode: InvokeModelWithResponseStream only')
	const c = asObj(body[STREAM_CONFIG])
	const mode = c?.streamProcessingMode
	const stray = Object.keys(c ?? {}).find((k) => k !== 'streamProcessingMode')
	if (!c || stray || (mode !== 'SYNCHRONOUS' && mode !== 'ASYNCHRONOUS'))
		return invalid(`amazon-bedrock-guardrailConfig: expected {"streamProcessingMode": "SYNCHRONOUS" | "ASYNCHRONOUS"}`)
	return { async: mode === 'ASYNCHRONOUS' }
}

const HEADER_ID = 'x-amzn-bedrock-guardrailidentifier'
const HEADER_VERSION = 'x-amzn-bedrock-guardrailversion'
const HEADER_TRACE = 'x-amzn-bedrock-trace'

/** InvokeModel's guardrail headers, checked. */
export function readInvokeGuardrail(headers: Headers, guardrails: Record<string, MockGuardrail>): GuardrailRead {
	const id = headers.get(HEADER_ID)
	const version = headers.get(HEADER_VERSION)
	const trace = headers.get(HEADER_TRACE)
	if (trace !== null && !['ENABLED', 'DISABLED', 'ENABLED_FULL'].includes(trace)) return invalid(`1 validation error detected: Value '${trace}' at 'trace' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED, ENABLED_FULL]`)
	if (id === null) return version === null ? {} : invalid('A guardrail version was provided without a guardrail identifier.')
	if (version === null) return invalid('Guardrail version is required when a guardrail identifier is provided.')
	const auth = headers.get('authorization') ?? ''
	if (auth.startsWith('AWS4-HMAC-SHA256 ')) {
		const signed = /SignedHeaders=([a-z0-9;-]+)/.exec(auth)?.[1]?.split(';') ?? []
		const unsigned = [HEADER_ID, HEADER_VERSION, ...(trace !== null ? [HEADER_TRACE] : [])].find((h) => !signed.includes(h))
		if (unsigned) return { invalid: { status: 403, type: 'InvalidSignatureException', message: `(mock) ${unsigned} must be among the signed headers` } }
	}
	return known(guardrails, id, version, trace === 'ENABLED' || trace === 'ENABLED_FULL')
}

/** Converse's `guardrailConfig`, checked (`streamed`: ConverseStream, which alone takes `streamProcessingMode`). */
export function readConverseGuardrail(body: unknown, streamed: boolean, guardrails: Record<string, MockGuardrail>): GuardrailRead {
	const b = asObj(body)
	if (!b || !('guardrailConfig' in b)) return {}
	const c = asObj(b.guardrailConfig)
	if (!c) return invalid('guardrailConfig: expected an object')
	const allowed = ['guardrailIdentifier', 'guardrailVersion', 'trace', ...(streamed ? ['streamProcessingMode'] : [])]
	const stray = Object.keys(c).find((k) => !allowed.includes(k))
	if (stray) return invalid(`Unknown parameter in guardrailConfig: "${stray}", must be one of: ${allowed.join(', ')}`)
	const id = asStr(c.guardrailIdentifier)
	const version = asStr(c.guardrailVersion)
	if (!id || !version) return invalid('guardrailConfig: guardrailIdentifier and guardrailVersion are required')
	if (c.trace !== undefined && !['enabled', 'disabled', 'enabled_full'].includes(String(c.trace))) return invalid(`guardrailConfig.trace: '${String(c.trace)}' is not one of enabled, disabled, enabled_full`)
	if (c.streamProcessingMode !== undefined && c.streamProcessingMode !== 'sync' && c.streamProcessingMode !== 'async')
		return invalid(`guardrailConfig.streamProcessingMode: '${String(c.streamProcessingMode)}' is not one of sync, async`)
	return known(guardrails, id, version, c.trace === 'enabled' || c.trace === 'enabled_full')
}

/** Whether any of the texts names the trigger word. */
export const triggered = (texts: string[], trigger: string) => texts.some((t) => t.toLowerCase().includes(trigger))

/** The texts of a Claude (Anthropic Messages) body: its system prompt and the messages' text blocks. */
export function claudeTexts(b: Obj): string[] {
	const blocks = (c: unknown): string[] => (typeof c === 'string' ? [c] : asArr(c).flatMap((x) => (asObj(x)?.type === 'text' ? [String(asObj(x)!.text)] : [])))
	return [...blocks(b.system), ...asArr(b.messages).flatMap((m) => blocks(asObj(m)?.content))]
}

/** The texts of a Converse body: its system blocks and the messages' text blocks. */
export const converseTexts = (b: Obj): string[] =>
	[...asArr(b.system), ...asArr(b.messages).flatMap((m) => asArr(asObj(m)?.content))].flatMap((x) => {
		const t = asStr(asObj(x)?.text)
		return t === undefined ? [] : [t]
	})

/** The trace Bedrock gives when asked (`amazon-bedrock-trace` / Converse's `trace`): what the input assessment matched. */
export const guardrailTrace = (id: string, trigger: string) => ({
	guardrail: { inputAssessment: { [id]: { wordPolicy: { customWords: [{ match: trigger, action: 'BLOCKED' }] }, topicPolicy: { topics: [{ name: 'Mock denied topic', type: 'DENY', action: 'BLOCKED' }] } } } },
})

export type Guard = NonNullable<Extract<GuardrailRead, { guard?: unknown }>['guard']>

const ID_HEADERS = () => ({ 'x-amzn-requestid': crypto.randomUUID() })

/** Sends each event-stream message as its own write. */
const written = (messages: Uint8Array[]) =>
	new ReadableStream<Uint8Array>({
		async start(ctl) {
			for (const m of messages) {
				ctl.enqueue(m)
				await Bun.sleep(0)
			}
			ctl.close()
		},
	})

/** InvokeModel's answer when the guardrail blocked the prompt: Claude's shape, the blocked message, no output tokens. */
export function invokeIntervened(model: string, input: number, g: Guard, streamed: boolean): Response {
	const action = { 'amazon-bedrock-guardrailAction': 'INTERVENED', ...(g.trace && { 'amazon-bedrock-trace': guardrailTrace(g.id, g.trigger) }) }
	const id = `msg_bdrk_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`
	const usage = { input_tokens: input, output_tokens: 0 }
	if (!streamed) {
		const body = { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: g.blocked }], stop_reason: 'end_turn', stop_sequence: null, usage, ...action }
		return Response.json(body, { headers: ID_HEADERS() })
	}
	const events: Obj[] = [
		{ type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } },
		{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
		{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: g.blocked } },
		{ type: 'content_block_stop', index: 0 },
		{ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 0 } },
		{ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: input, outputTokenCount: 0, invocationLatency: 9, firstByteLatency: 9 }, ...action },
	]
	return new Response(written(events.map((e) => chunkMessage(JSON.stringify(e)))), {
		status: 200,
		headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json', ...ID_HEADERS() },
	})
}

/** Converse's answer when the guardrail blocked the prompt: `stopReason: "guardrail_intervened"`, the trace when asked. */
export function converseIntervened(input: number, g: Guard, streamed: boolean): Response {
	const usage = { inputTokens: input, outputTokens: 0, totalTokens: input }
	const trace = g.trace ? { trace: guardrailTrace(g.id, g.trigger) } : {}
	if (!streamed) return Response.json({ output: { message: { role: 'assistant', content: [{ text: g.blocked }] } }, stopReason: 'guardrail_intervened', usage, metrics: { latencyMs: 9 }, ...trace }, { headers: ID_HEADERS() })
	const events: Array<[string, Obj]> = [
		['messageStart', { role: 'assistant' }],
		['contentBlockDelta', { contentBlockIndex: 0, delta: { text: g.blocked } }],
		['contentBlockStop', { contentBlockIndex: 0 }],
		['messageStop', { stopReason: 'guardrail_intervened' }],
		['metadata', { usage, metrics: { latencyMs: 9 }, ...trace }],
	]
	return new Response(written(events.map(([type, payload]) => converseEvent(type, payload))), { status: 200, headers: { 'content-type': 'application/vnd.amazon.eventstream', ...ID_HEADERS() } })
}

const ACTION = { 'amazon-bedrock-guardrailAction': 'INTERVENED' }
const textOf = (content: unknown) =>
	asArr(content)
		.map((b) => (asObj(b)?.type === 'text' ? String(asObj(b)!.text) : ''))
		.join('')

/** A whole Claude answer (JSON text) scanned by the guardrail's output word: the blocked message when it names it. */
export function guardOutputJson(json: string, g: Guard): string {
	const o = JSON.parse(json) as Obj
	if (!g.outputTrigger || !textOf(o.content).toLowerCase().includes(g.outputTrigger)) return json
	return JSON.stringify({ ...o, content: [{ type: 'text', text: g.blocked }], stop_reason: 'guardrail_intervened', stop_sequence: null, ...ACTION })
}

/**
 * Claude's stream events (`{event, data}`, data as JSON text) scanned by the guardrail's output word: as they came when
 * the answer never names it; else, sync: the blocked message alone; async: the events up to the delta naming it, then
 * the block's end and Bedrock's intervention (the module comment). `message_stop` comes as the model sent it: the
 * caller adds the invocation metrics.
 */
export function guardOutputEvents(events: Array<{ event: string; data: string }>, g: Guard, async: boolean): Array<{ event: string; data: string }> {
	const word = g.outputTrigger
	if (!word) return events
	const parsed = events.map((e) => ({ ...e, o: JSON.parse(e.data) as Obj }))
	let text = ''
	const at = parsed.findIndex((e) => {
		const d = asObj(e.o.delta)
		if (e.event === 'content_block_delta' && d?.type === 'text_delta') text += String(d.text)
		return text.toLowerCase().includes(word)
	})
	if (at < 0) return events
	const final = parsed.find((e) => e.event === 'message_delta')?.o
	const end = (index: unknown) => [
		{ event: 'content_block_stop', data: JSON.stringify({ type: 'content_block_stop', index }) },
		{
			event: 'message_delta',
			data: JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'guardrail_intervened', stop_sequence: null }, usage: asObj(final?.usage) ?? { output_tokens: 0 } }),
		},
		{ event: 'message_stop', data: JSON.stringify({ type: 'message_stop', ...ACTION }) },
	]
	if (async) return [...events.slice(0, at + 1), ...end(parsed[at]!.o.index)]
	const start = parsed.find((e) => e.event === 'message_start')!
	return [
		{ event: 'message_start', data: start.data },
		{ event: 'content_block_start', data: JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) },
		{ event: 'content_block_delta', data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: g.blocked } }) },
		...end(0),
	]
}
