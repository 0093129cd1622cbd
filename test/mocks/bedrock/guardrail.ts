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
 * @module
 */
import { asArr, asObj, asStr, type Obj } from '../shared/json'
import { converseEvent } from './converse'
import { chunkMessage } from './event-stream'

/** A guardrail of the mock's account: its versions, the word that makes it intervene, and what it then answers. */
export type MockGuardrail = { versions: string[]; trigger: string; blocked?: string }

export const BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.'

/** What the request asked of a guardrail, or why Bedrock refuses it. */
export type GuardrailRead = { guard?: { id: string; trigger: string; blocked: string; trace: boolean } } | { invalid: { status: number; type: string; message: string } }

const invalid = (message: string): GuardrailRead => ({ invalid: { status: 400, type: 'ValidationException', message } })

function known(guardrails: Record<string, MockGuardrail>, id: string, version: string, trace: boolean): GuardrailRead {
	const g = guardrails[id]
	if (!g || !g.versions.includes(version)) return invalid('The guardrail identifier or version provided in the request does not exist.')
	return { guard: { id, trigger: g.trigger.toLowerCase(), blocked: g.blocked ?? BLOCKED_MESSAGE, trace } }
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

type Guard = NonNullable<Extract<GuardrailRead, { guard?: unknown }>['guard']>

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
