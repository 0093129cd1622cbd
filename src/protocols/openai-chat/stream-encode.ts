/**
 * Canonical stream events → client `chat.completion.chunk` SSE, byte-for-byte in the shape OpenAI streams
 * (https://platform.openai.com/docs/api-reference/chat-streaming), so the official SDK's `ChatCompletionStream`
 * and the Vercel AI SDK's strict chunk schema both accept it.
 *
 * Keepalive: `ping` events produce nothing here. OpenAI's stream has no ping event and SseFrame cannot carry a
 * comment line, so the relay sends `SSE_KEEPALIVE` comments itself.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import { emptyUsage, type TextPart, type Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { packToolCallId } from '../../core/tool-ids'
import type { EncodeContext } from '../codec'
import { type EventEncoder, runMachine } from '../stream-machine'
import { encodeStreamError } from './error'
import { encodeLogprobs } from './logprobs'
import { mcpOutcome } from './mcp'
import { completionId } from './response'
import { encodeFinishReason, encodeUsage, tierField } from './usage'
import { encodeAnnotations } from './web-search'

type Delta = Record<string, unknown>

/**
 * Encodes events as OpenAI chunks:
 * - first chunk: `delta: {role:'assistant', content:'', refusal:null}` (Portkey #1399: role on the first delta), with
 *   `content: null` when the answer opens with a tool call, as OpenAI sends it (a client that reads `''` as text, the
 *   Vercel AI SDK, would show an empty text part); written with the first event that shows what the answer opens with;
 * - text → `delta.content` (with `logprobs` on its chunk when the event has them), thinking → `delta.reasoning_content` (DeepSeek), signatures and redacted thinking →
 *   `delta.reasoning_details` (OpenRouter);
 * - tool calls: the first delta of each call carries `index` (0, 1… per call, not the block index), `id`,
 *   `type`, `function.name` and `arguments:''`; later deltas only `index` + `arguments` (WIRE-NOTES wire §7,
 *   Portkey #1275), `{}` for a call whose arguments never came (wire §8); MCP calls the gateway ran go to `delta.mcp_calls` the same way (mcp.ts);
 * - a web search's citations → `delta.annotations` (`url_citation`, spans into the whole message), in a chunk of their
 *   own once the text is done, as OpenAI's search models stream them (openai/openai-java#297);
 * - then a chunk with an empty delta and `finish_reason`; then, when `ctx.includeUsage`, a chunk with
 *   `choices: []` and `usage` (and `usage: null` on every other chunk, wire §12); then `data: [DONE]`.
 * An `error` event becomes `data: {"error":{…}}` and ends the stream without `[DONE]`.
 * With `ctx.choice` (one of several answers: choices.ts) every chunk names that index, and the usage chunk and
 * `[DONE]` are left to the choices encoder.
 */
export function streamEncoder(ctx: EncodeContext): EventEncoder {
	let over = false
	let id = ''
	let created = 0
	let started = false
	let roleSent = false
	let finished = false
	let sawTool = false
	let nextTool = 0
	const toolOfBlock = new Map<number, number>()
	/** Tool calls (by block) whose arguments have not streamed yet: a call without parameters gets `{}` when it stops. */
	const argless = new Set<number>()
	// MCP calls the gateway ran (mcp.ts): their own index sequence, by block and by call id (for the result).
	let nextMcp = 0
	const mcpOfBlock = new Map<number, number>()
	const mcpOfId = new Map<string, number>()
	const choiceIndex = ctx.choice ?? 0
	/** The answer's text blocks in order, with their citations, for the annotations' spans. */
	const texts: TextPart[] = []
	const textAt = new Map<number, TextPart & { citations: NonNullable<TextPart['citations']> }>()
	const usage: Usage = emptyUsage()
	const addUsage = (u: Partial<Usage>) => {
		for (const k of Object.keys(u) as Array<keyof Usage>) if (u[k] !== undefined) Object.assign(usage, { [k]: u[k] })
	}
	const frame = (body: Record<string, unknown>): SseFrame => ({
		data: JSON.stringify({ id, object: 'chat.completion.chunk', created, model: ctx.model, ...body }),
	})
	const chunk = (delta: Delta, finishReason: string | null = null, logprobs: ReturnType<typeof encodeLogprobs> = null): SseFrame =>
		frame({
			choices: [{ index: choiceIndex, delta, logprobs, finish_reason: finishReason }],
			...(ctx.includeUsage && { usage: null }),
		})
	// Text and reasoning deltas, most of the chunks of a converted stream, are written as text around the one string
	// that changes: the bytes `chunk({[key]: text})` gives, at a fraction of the time and without its four objects.
	let head = ''
	let tail = ''
	const textChunk = (key: 'content' | 'reasoning_content', text: string): SseFrame => ({ data: `${head}"${key}":${JSON.stringify(text)}${tail}` })

	return {
		push(ev, out) {
			if (over) return
			if (ev.type === 'ping') return
			if (ev.type === 'error') {
				out.push(encodeStreamError(ev.error))
				over = true
				return
			}
			if (!started) {
				started = true
				const start = ev.type === 'start' ? ev : undefined
				id = completionId(start?.id)
				created = start?.created ?? Math.floor(Date.now() / 1000)
				head = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${JSON.stringify(created)},"model":${JSON.stringify(ctx.model)},"choices":[{"index":${choiceIndex},"delta":{`
				tail = `},"logprobs":null,"finish_reason":null}]${ctx.includeUsage ? ',"usage":null' : ''}}`
			}
			if (!roleSent && ev.type !== 'start' && ev.type !== 'usage') {
				roleSent = true
				const tool = ev.type === 'block_start' && (ev.block.kind === 'tool_call' || ev.block.kind === 'mcp_tool_use')
				out.push(chunk({ role: 'assistant', content: tool ? null : '', refusal: null }))
			}
			if (finished && ev.type !== 'usage') return
			switch (ev.type) {
				case 'start':
					if (ev.usage) addUsage(ev.usage)
					break
				case 'usage':
					addUsage(ev.usage)
					break
				case 'block_start':
					if (ev.block.kind === 'text') {
						const t = { type: 'text' as const, text: '', citations: [] }
						texts.push(t)
						textAt.set(ev.index, t)
					} else if (ev.block.kind === 'tool_call') {
						const index = nextTool++
						toolOfBlock.set(ev.index, index)
						argless.add(ev.index)
						sawTool = true
						const call = { index, id: packToolCallId(ev.block.id, ev.block.signature), type: 'function', function: { name: ev.block.name, arguments: '' } }
						out.push(chunk({ tool_calls: [call] }))
					} else if (ev.block.kind === 'redacted_thinking')
						out.push(chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: ev.block.data }] }))
					else if (ev.block.kind === 'mcp_tool_use') {
						const index = nextMcp++
						mcpOfBlock.set(ev.index, index)
						mcpOfId.set(ev.block.id, index)
						const b = ev.block
						out.push(chunk({ mcp_calls: [{ index, id: b.id, type: 'mcp_call', server_name: b.serverName, name: b.name, arguments: '' }] }))
					} else if (ev.block.kind === 'mcp_tool_result') {
						const index = mcpOfId.get(ev.block.toolUseId)
						if (index !== undefined) out.push(chunk({ mcp_calls: [{ index, ...mcpOutcome(ev.block) }] }))
					}
					break
				case 'citation':
					textAt.get(ev.index)?.citations.push(ev.citation)
					break
				case 'text_delta': {
					const t = textAt.get(ev.index)
					if (t) t.text += ev.text
					// Log probabilities go on the chunk of the text they score, as OpenAI streams them.
					if (ev.logprobs?.length) out.push(chunk({ content: ev.text }, null, encodeLogprobs(ev.logprobs)))
					else if (ev.text) out.push(textChunk('content', ev.text))
					break
				}
				case 'thinking_delta':
					if (ev.text) out.push(textChunk('reasoning_content', ev.text))
					break
				case 'signature_delta':
					out.push(chunk({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: ev.signature }] }))
					break
				case 'json_delta': {
					const index = toolOfBlock.get(ev.index)
					if (index !== undefined && ev.json) {
						argless.delete(ev.index)
						out.push(chunk({ tool_calls: [{ index, function: { arguments: ev.json } }] }))
					}
					const mcp = mcpOfBlock.get(ev.index)
					if (mcp !== undefined && ev.json) out.push(chunk({ mcp_calls: [{ index: mcp, arguments: ev.json }] }))
					break
				}
				case 'block_stop':
					// Claude streams a call without parameters as `partial_json: ""`; OpenAI sends `{}`, and clients that take a
					// call as done once its arguments parse (fantasy, Crush's Go layer) never ran one left at "" (wire §8).
					if (argless.delete(ev.index)) out.push(chunk({ tool_calls: [{ index: toolOfBlock.get(ev.index), function: { arguments: '{}' } }] }))
					break
				case 'finish': {
					finished = true
					const annotations = encodeAnnotations(texts)
					if (annotations.length) out.push(chunk({ annotations }))
					out.push(chunk({}, encodeFinishReason(ev.reason, sawTool)))
					break
				}
			}
		},
		end(out) {
			if (over) return
			over = true
			if (!finished) {
				// Upstream decoders end a cut stream with `error`; reaching here means the event source stopped early.
				out.push(encodeStreamError(new GatewayError('upstream', 'upstream stream ended unexpectedly', { retryable: true })))
				return
			}
			if (ctx.choice !== undefined) return
			if (ctx.includeUsage) out.push(frame({ choices: [], usage: encodeUsage(usage), ...tierField(usage) }))
			out.push({ data: '[DONE]' })
		},
		get done() {
			return over
		},
	}
}

export const encodeStream = (events: AsyncIterable<StreamEvent>, ctx: EncodeContext): AsyncGenerator<SseFrame> => runMachine(streamEncoder(ctx), events)
