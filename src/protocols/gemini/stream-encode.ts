/**
 * Canonical events → a Gemini `alt=sse` stream, as `streamGenerateContent` sends it: every frame is a whole
 * GenerateContentResponse chunk (`candidates[0].content.parts`, `modelVersion`, `responseId`), the last one adds
 * `finishReason` and `usageMetadata`; no event names, no terminator. Tool calls are sent whole (Gemini never streams
 * `args` in pieces), so their JSON fragments are collected until the block closes.
 * @module
 */
import type { BlockStart, StreamEvent } from '../../core/events'
import type { Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import type { EncodeContext } from '../codec'
import { type EventEncoder, runMachine } from '../stream-machine'
import { encodeStreamError } from './error'
import type { GeminiPart, GeminiStreamChunk } from './model'
import { isObj, REDACTED_PREFIX } from './read'
import { encodeFinishReason, encodeUsage } from './usage'

type Call = { id: string; name: string; signature?: string; json: string }

const parseArgs = (json: string): Record<string, unknown> => {
	try {
		const v: unknown = JSON.parse(json || '{}')
		return isObj(v) ? v : {}
	} catch {
		return {} // WIRE-NOTES §8: arguments may be invalid JSON; Gemini needs an object
	}
}

/**
 * Canonical events → Gemini SSE frames for a Gemini-native client. `ping` yields nothing: Gemini has no keepalive
 * chunk, and an SSE comment is not expressible as an SseFrame (the relay can write `SSE_KEEPALIVE` bytes itself).
 * An `error` becomes the `{error:{code,message,status}}` frame Google SDKs throw on, and ends the stream.
 */
export function streamEncoder(ctx: EncodeContext): EventEncoder {
	let over = false
	let id = ''
	const blocks = new Map<number, BlockStart>()
	let call: Call | undefined
	let usage: Partial<Usage> | undefined
	const frame = (parts: GeminiPart[], finishReason?: string): SseFrame => {
		if (!id) id = newId('gemini')
		const chunk: GeminiStreamChunk = {
			candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
		}
		if (finishReason && usage) chunk.usageMetadata = encodeUsage(usage)
		chunk.modelVersion = ctx.model
		chunk.responseId = id
		return { data: JSON.stringify(chunk) }
	}
	return {
		push(ev, out) {
			if (over) return
			switch (ev.type) {
				case 'start':
					id = ev.id
					if (ev.usage) usage = { ...usage, ...ev.usage }
					break
				case 'block_start':
					blocks.set(ev.index, ev.block)
					if (ev.block.kind === 'tool_call')
						call = { id: ev.block.id, name: ev.block.name, signature: ev.block.signature, json: '' }
					else if (ev.block.kind === 'redacted_thinking')
						out.push(frame([{ text: '', thought: true, thoughtSignature: REDACTED_PREFIX + ev.block.data }]))
					// mcp_tool_use / mcp_tool_result blocks have no Gemini form and are left out (see response.ts).
					break
				case 'text_delta':
					if (ev.text) out.push(frame([{ text: ev.text }]))
					break
				case 'thinking_delta':
					if (ev.text) out.push(frame([{ text: ev.text, thought: true }]))
					break
				case 'signature_delta': {
					const kind = blocks.get(ev.index)?.kind
					if (kind === 'tool_call' && call) call.signature = ev.signature
					else if (kind === 'thinking') out.push(frame([{ text: '', thought: true, thoughtSignature: ev.signature }]))
					else out.push(frame([{ text: '', thoughtSignature: ev.signature }]))
					break
				}
				case 'json_delta':
					if (call) call.json += ev.json
					break
				case 'block_stop':
					if (call && blocks.get(ev.index)?.kind === 'tool_call') {
						const part: GeminiPart = { functionCall: { id: call.id, name: call.name, args: parseArgs(call.json) } }
						if (call.signature) part.thoughtSignature = call.signature
						call = undefined
						out.push(frame([part]))
					}
					break
				case 'usage':
					usage = { ...usage, ...ev.usage }
					break
				case 'finish':
					// No part of its own: an empty text part here went into the history @google/genai clients send back.
					out.push(frame([], encodeFinishReason(ev.reason)))
					break
				case 'error':
					out.push(encodeStreamError(ev.error))
					over = true
					return
				case 'ping':
					break
			}
		},
		// A Gemini stream has no terminator: it ends with the chunk that carries finishReason.
		end() {
			over = true
		},
		get done() {
			return over
		},
	}
}

export const encodeStream = (events: AsyncIterable<StreamEvent>, ctx: EncodeContext): AsyncGenerator<SseFrame> => runMachine(streamEncoder(ctx), events)
