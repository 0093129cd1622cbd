/**
 * One call through each inbound protocol's official SDK (retries off), reduced to what the caller saw when the
 * upstream misbehaved: the answer text that reached it, and the error its SDK raised (status, the shape's error type,
 * `retry-after`), or none when the call ended as if complete.
 * @module
 */
import Anthropic from '@anthropic-ai/sdk'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'

export const INBOUND = ['chat', 'responses', 'messages', 'gemini'] as const
export type Inbound = (typeof INBOUND)[number]

export type Seen = {
	/** Answer text the caller received (streamed pieces, or the whole answer). */
	text: string
	/** Streams: the protocol's terminator arrived ([DONE], response.completed, message_stop, a finishReason). */
	ended: boolean
	/** Responses streams: the `response.failed` / `response.incomplete` event, which the SDK yields rather than raises. */
	failed?: unknown
	/** The error the SDK raised; undefined when the call ended without one. */
	error?: { status?: number; type: string; code?: string | null; message: string; retryAfter?: string | null; sdk: string }
}

const PROMPT = 'one two three four five six seven eight nine ten'
export const ANSWER = `Hello! You said: ${PROMPT}`

/** The caller's view of one call, whatever the client raised. */
export async function call(url: string, key: string, inbound: Inbound, model: string, stream: boolean): Promise<Seen> {
	const seen: Seen = { text: '', ended: !stream }
	try {
		await CALLS[inbound](url, key, model, stream, seen)
	} catch (e) {
		seen.error = describe(e)
	}
	return seen
}

function describe(e: unknown): NonNullable<Seen['error']> {
	if (e instanceof OpenAI.APIError) {
		// A Responses `error` event is `{type: "error", code, message}`: the SDK raises it with that as its error.
		const body = e.error as { type?: string; code?: string } | undefined
		return { sdk: 'openai', status: e.status, type: e.type ?? body?.type ?? '', code: e.code ?? body?.code, message: e.message, retryAfter: e.headers?.get('retry-after') }
	}
	if (e instanceof Anthropic.APIError) {
		const body = e.error as { error?: { type?: string } } | undefined
		return { sdk: 'anthropic', status: e.status, type: body?.error?.type ?? '', message: e.message, retryAfter: e.headers?.get('retry-after') }
	}
	if (e instanceof ApiError) {
		// The message is the error body, or (raised mid-stream) `got status: …. {body}`.
		let status = ''
		try {
			status = (JSON.parse(e.message.slice(e.message.indexOf('{'))) as { error: { status: string } }).error.status
		} catch {}
		return { sdk: 'genai', status: e.status, type: status, message: e.message }
	}
	const err = e as Error
	return { sdk: 'other', type: err?.name ?? typeof e, message: String(err?.message ?? e) }
}

type Caller = (url: string, key: string, model: string, stream: boolean, seen: Seen) => Promise<void>

const CALLS: Record<Inbound, Caller> = {
	async chat(url, key, model, stream, seen) {
		const c = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
		const messages = [{ role: 'user' as const, content: PROMPT }]
		if (!stream) {
			seen.text = (await c.chat.completions.create({ model, messages, max_tokens: 100 })).choices[0]?.message.content ?? ''
			return
		}
		for await (const ch of await c.chat.completions.create({ model, messages, max_tokens: 100, stream: true, stream_options: { include_usage: true } })) {
			seen.text += ch.choices[0]?.delta?.content ?? ''
			// The SDK hides [DONE]; the usage chunk (asked for) is the last one before it.
			if (ch.usage) seen.ended = true
		}
	},
	async responses(url, key, model, stream, seen) {
		const c = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
		if (!stream) {
			const r = await c.responses.create({ model, input: PROMPT, max_output_tokens: 100 })
			seen.text = r.output_text
			if (r.status !== 'completed') seen.failed = r.status
			return
		}
		for await (const ev of await c.responses.create({ model, input: PROMPT, max_output_tokens: 100, stream: true })) {
			if (ev.type === 'response.output_text.delta') seen.text += ev.delta
			if (ev.type === 'response.failed' || ev.type === 'response.incomplete') seen.failed = ev.response.error ?? ev.type
			if (ev.type === 'response.completed') seen.ended = true
		}
	},
	async messages(url, key, model, stream, seen) {
		const c = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 })
		const params = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: PROMPT }] }
		if (!stream) {
			const r = await c.messages.create(params)
			seen.text = r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
			return
		}
		for await (const ev of await c.messages.create({ ...params, stream: true })) {
			if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') seen.text += ev.delta.text
			if (ev.type === 'message_stop') seen.ended = true
		}
	},
	async gemini(url, key, model, stream, seen) {
		const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url, apiVersion: 'v1beta', retryOptions: { attempts: 1 } } })
		const params = { model, contents: PROMPT, config: { maxOutputTokens: 100 } }
		if (!stream) {
			const r = await ai.models.generateContent(params)
			seen.text = r.text ?? ''
			return
		}
		for await (const ch of await ai.models.generateContentStream(params)) {
			seen.text += ch.text ?? ''
			if (ch.candidates?.[0]?.finishReason) seen.ended = true
		}
	},
}
