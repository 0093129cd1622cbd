/**
 * Calls through the gateway with the official SDKs, stream or not, reduced to one comparable `Answer`: the text,
 * reasoning, tool calls, stop reason and usage as the client sees them, plus the assistant turn exactly as a client
 * would send it back next turn. Streams are checked against the protocol's invariants on the way (wire-checks.ts).
 * @module
 */
import { expect } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { checkChatChunks, checkMessageEvents } from './wire-checks'

export type Call = { id: string; name: string; args: Record<string, unknown> }

export type Answer = {
	text: string
	reasoning: string
	/** Thinking signatures (Anthropic `signature`, OpenAI-shape `reasoning_details[].signature`). */
	signatures: string[]
	calls: Call[]
	/** The protocol's own stop reason (`finish_reason` / `stop_reason`). */
	stop: string | null
	stopSequence?: string | null
	/** `input` is the whole prompt (cache reads included) in both protocols. */
	usage: { input: number; output: number; cached: number; reasoning?: number }
	/** Anthropic streams: `message_start.message.usage.input_tokens`. */
	startInput?: number
	/** The assistant turn to send back. */
	replay: any
	/** Streams: the chunks (chat) or events (messages) in arrival order. */
	events?: any[]
}

type ChatParams = Omit<OpenAI.Chat.Completions.ChatCompletionCreateParams, 'stream' | 'stream_options'> & Record<string, unknown>

type Detail = { type: string; text?: string; signature?: string; data?: string }

/** POST /v1/chat/completions through the OpenAI SDK; streams ask for the usage chunk. `options`: the request's own (a client's headers). */
export async function chat(client: OpenAI, params: ChatParams, stream: boolean, options?: OpenAI.RequestOptions): Promise<Answer> {
	if (!stream) {
		const r = await client.chat.completions.create({ ...params, stream: false } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, options)
		expect(r.object).toBe('chat.completion')
		expect(r.model).toBe(params.model)
		const msg = r.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning_content?: string; reasoning_details?: Detail[] }
		const u = r.usage!
		return {
			text: msg.content ?? '',
			reasoning: msg.reasoning_content ?? '',
			signatures: (msg.reasoning_details ?? []).flatMap((d) => (d.signature ? [d.signature] : [])),
			calls: (msg.tool_calls ?? []).map((c) => {
				if (c.type !== 'function') throw new Error(`unexpected tool call type ${c.type}`)
				return { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) }
			}),
			stop: r.choices[0]!.finish_reason,
			usage: { input: u.prompt_tokens, output: u.completion_tokens, cached: u.prompt_tokens_details?.cached_tokens ?? 0, reasoning: u.completion_tokens_details?.reasoning_tokens },
			replay: msg,
		}
	}
	const s = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } } as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming, options)
	const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
	for await (const c of s) chunks.push(c)
	checkChatChunks(chunks, params.model, true)
	let text = ''
	let reasoning = ''
	let stop: string | null = null
	const details: Detail[] = []
	const calls: Array<{ id: string; name: string; arguments: string }> = []
	for (const c of chunks) {
		const choice = c.choices[0]
		if (!choice) continue
		const d = choice.delta as typeof choice.delta & { reasoning_content?: string; reasoning_details?: Detail[] }
		text += d.content ?? ''
		reasoning += d.reasoning_content ?? ''
		details.push(...(d.reasoning_details ?? []))
		for (const tc of d.tool_calls ?? []) {
			if (tc.id) calls[tc.index] = { id: tc.id, name: tc.function!.name!, arguments: '' }
			calls[tc.index]!.arguments += tc.function?.arguments ?? ''
		}
		if (choice.finish_reason) stop = choice.finish_reason
	}
	const u = chunks[chunks.length - 1]!.usage!
	const replay: Record<string, unknown> = { role: 'assistant', content: text || null }
	if (calls.length) replay.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
	if (reasoning) replay.reasoning_content = reasoning
	if (details.length) replay.reasoning_details = details
	return {
		text,
		reasoning,
		signatures: details.flatMap((d) => (d.signature ? [d.signature] : [])),
		calls: calls.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.arguments) })),
		stop,
		usage: { input: u.prompt_tokens, output: u.completion_tokens, cached: u.prompt_tokens_details?.cached_tokens ?? 0, reasoning: u.completion_tokens_details?.reasoning_tokens },
		replay,
		events: chunks,
	}
}

type MessageParams = Omit<Anthropic.Messages.MessageCreateParamsNonStreaming, 'stream'>

function fromMessage(m: Anthropic.Messages.Message, model: string): Answer {
	expect(m.type).toBe('message')
	expect(m.role).toBe('assistant')
	expect(m.model).toBe(model)
	expect(m.id).toStartWith('msg_')
	const u = m.usage
	const cached = u.cache_read_input_tokens ?? 0
	return {
		text: m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
		reasoning: m.content.map((b) => (b.type === 'thinking' ? b.thinking : '')).join(''),
		signatures: m.content.flatMap((b) => (b.type === 'thinking' ? [b.signature] : [])),
		calls: m.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: b.input as Record<string, unknown> }] : [])),
		stop: m.stop_reason,
		stopSequence: m.stop_sequence,
		usage: { input: u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0), output: u.output_tokens, cached },
		replay: { role: 'assistant', content: m.content },
	}
}

/** POST /v1/messages through the Anthropic SDK (`messages.stream` for streams, checking every event). */
export async function messages(client: Anthropic, params: MessageParams, stream: boolean): Promise<Answer> {
	if (!stream) return fromMessage(await client.messages.create({ ...params, stream: false }), params.model)
	const s = client.messages.stream(params)
	const events: Array<{ type: string }> = []
	// The SDK accumulates its snapshot into the message_start object it yielded: keep a copy of each event as sent.
	for await (const e of s) events.push(structuredClone(e))
	checkMessageEvents(events, params.model)
	const start = events[0] as Anthropic.Messages.RawMessageStartEvent
	return { ...fromMessage(await s.finalMessage(), params.model), startInput: start.message.usage.input_tokens, events }
}

/** Either protocol by name, for loops over both. */
export type Protocol = 'chat' | 'messages'
export const PROTOCOLS: Protocol[] = ['chat', 'messages']
