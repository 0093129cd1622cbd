/**
 * An upstream's Interactions stream → canonical events: `interaction.created` starts the answer, each step a block
 * (`model_output` text with the citations of its `text_annotation_delta`s, `thought` thinking with its signature, `function_call` a tool call whose `arguments_delta`s
 * are its JSON), `interaction.completed` gives the usage and the end; an `error` event, or a stream that stops before
 * `interaction.completed`, ends with `error`.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import { jsonOrUndefined } from '../../core/json'
import { unpackToolCallId } from '../../core/tool-ids'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import { isObj, type Obj } from '../gemini/read'
import type { FrameDecoder } from '../stream-machine'
import { decodeAnnotations } from './annotations'
import { decodeUsage } from './response'

export function streamDecoder(): FrameDecoder {
	let over = false
	let started = false
	let next = 0
	let toolSeen = false
	/** Step index → the canonical block open for it. */
	const open = new Map<number, { index: number; kind: 'text' | 'thinking' | 'call'; text: string }>()
	let out: StreamEvent[] = []
	const start = (id?: unknown, model?: unknown) => {
		if (started) return
		started = true
		out.push({ type: 'start', id: typeof id === 'string' ? id : newId('v1_'), model: typeof model === 'string' ? model : '' })
	}
	const stop = (step: number) => {
		const o = open.get(step)
		if (!o) return
		open.delete(step)
		out.push({ type: 'block_stop', index: o.index })
	}
	const fail = (message: string, code = 'upstream_stream_error') => {
		for (const step of [...open.keys()]) stop(step)
		out.push({ type: 'error', error: new GatewayError('upstream', message, { code, retryable: true }) })
		over = true
	}
	function startStep(step: number, s: Obj) {
		const index = next++
		if (s.type === 'model_output') {
			const text = Array.isArray(s.content) ? s.content.map((c) => (isObj(c) && typeof c.text === 'string' ? c.text : '')).join('') : ''
			open.set(step, { index, kind: 'text', text })
			out.push({ type: 'block_start', index, block: { kind: 'text' } })
			if (text) out.push({ type: 'text_delta', index, text })
		} else if (s.type === 'thought') {
			open.set(step, { index, kind: 'thinking', text: '' })
			out.push({ type: 'block_start', index, block: { kind: 'thinking' } })
			if (typeof s.signature === 'string' && s.signature) out.push({ type: 'signature_delta', index, signature: s.signature })
		} else if (s.type === 'function_call' && typeof s.name === 'string') {
			toolSeen = true
			const { id, signature } = unpackToolCallId(typeof s.id === 'string' && s.id ? s.id : newId('call_'))
			open.set(step, { index, kind: 'call', text: '' })
			out.push({ type: 'block_start', index, block: { kind: 'tool_call', id, name: s.name, ...(signature && { signature }) } })
			if (isObj(s.arguments) && Object.keys(s.arguments).length) out.push({ type: 'json_delta', index, json: JSON.stringify(s.arguments) })
		} else next--
	}
	function delta(step: number, d: Obj) {
		const o = open.get(step)
		if (!o) return
		if (d.type === 'text' && typeof d.text === 'string' && o.kind === 'text') {
			o.text += d.text
			out.push({ type: 'text_delta', index: o.index, text: d.text })
		} else if (d.type === 'text_annotation_delta' && o.kind === 'text')
			for (const citation of decodeAnnotations(d.annotations, o.text)) out.push({ type: 'citation', index: o.index, citation })
		else if (d.type === 'thought_summary' && o.kind === 'thinking' && isObj(d.content) && typeof d.content.text === 'string')
			out.push({ type: 'thinking_delta', index: o.index, text: d.content.text })
		else if (d.type === 'thought_signature' && o.kind === 'thinking' && typeof d.signature === 'string') out.push({ type: 'signature_delta', index: o.index, signature: d.signature })
		else if (d.type === 'arguments_delta' && o.kind === 'call' && typeof d.arguments === 'string') out.push({ type: 'json_delta', index: o.index, json: d.arguments })
	}
	return {
		push(f: SseFrame, events) {
			if (over) return
			out = events
			const e = jsonOrUndefined(f.data)
			if (!isObj(e)) return
			const type = e.event_type ?? f.event
			if (type === 'error') {
				const err = isObj(e.error) ? e.error : {}
				return fail(typeof err.message === 'string' ? err.message : 'upstream stream error', typeof err.code === 'string' ? err.code : undefined)
			}
			const interaction = isObj(e.interaction) ? e.interaction : undefined
			start(interaction?.id, interaction?.model)
			if (type === 'step.start' && typeof e.index === 'number' && isObj(e.step)) startStep(e.index, e.step)
			else if (type === 'step.delta' && typeof e.index === 'number' && isObj(e.delta)) delta(e.index, e.delta)
			else if (type === 'step.stop' && typeof e.index === 'number') stop(e.index)
			else if (type === 'interaction.completed' && interaction) {
				for (const step of [...open.keys()]) stop(step)
				const usage = decodeUsage(interaction.usage, interaction.service_tier)
				if (usage) out.push({ type: 'usage', usage })
				if (interaction.status === 'failed' || interaction.status === 'cancelled') return fail(`the upstream interaction ${interaction.status}`)
				out.push({ type: 'finish', reason: interaction.status === 'incomplete' ? 'max_tokens' : toolSeen ? 'tool_use' : 'end_turn' })
				over = true
			}
		},
		end(events) {
			if (over) return
			out = events
			start()
			fail('upstream stream ended before interaction.completed', 'upstream_cut')
		},
		get done() {
			return over
		},
	}
}
