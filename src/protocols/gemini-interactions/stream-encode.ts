/**
 * Canonical stream events → an Interactions SSE stream (https://ai.google.dev/gemini-api/docs/interactions/streaming),
 * each frame named by `event:` with the same `event_type` in its data and a running `event_id`:
 * `interaction.created` (status in_progress) → `interaction.status_update` → per step `step.start` (the step's shell)
 * → `step.delta` (`text`, and once a text block is whole a `text_annotation_delta` with its citations, annotations.ts;
 * `thought_summary` and `thought_signature`, or for thinking the client did not ask to see one
 * `thought_signature` carrying it whole at its end, steps.ts `thoughtStep`; a function call's `arguments_delta`) →
 * `step.stop` → `interaction.completed`, whose interaction carries the status and usage but no steps, as Google's
 * does ("empty outputs to reduce the payload size": the client has them from the deltas), then `done` with data
 * `[DONE]`, Google's end marker (@google/genai's interactions client ends its stream on it). A failure is an `error`
 * event. `ping` sends nothing (the API has no keepalive event).
 *
 * A run of text blocks is one `model_output` step, as a whole answer gives it (response.ts `outputSteps`): the step of
 * a text block stays open until a block of another kind starts or the answer ends, and the next text block continues
 * it (Claude splits its text into blocks, each cited claim one).
 *
 * `onEnd` receives the whole Interaction (its steps gathered from the events) when the stream completes: what the
 * route keeps for `GET` and `previous_interaction_id`.
 * @module
 */
import { utf8Length } from '../../core/citations'
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import { type Citation, emptyUsage, type Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { packToolCallId } from '../../core/tool-ids'
import type { Obj } from '../gemini/read'
import type { EncodeContext } from '../codec'
import type { EventEncoder } from '../stream-machine'
import { urlCitation } from './annotations'
import { errorEvent } from './error'
import type { Interaction } from './model'
import { encodeUsage, iso, statusOf, tierOf } from './response'
import { thoughtStep } from './steps'

/** The frame that ends a completed stream. */
export const DONE_FRAME: SseFrame = { event: 'done', data: '[DONE]' }

/**
 * A step being streamed. Text: `start` is where the open block's text begins in the step's (UTF-16), `citations` that
 * block's, `annotations` those of the blocks before it, already sent.
 */
type Open = {
	step: number
	kind: 'text' | 'thought' | 'call'
	shape: Obj
	text: string
	args: string
	signature?: string
	redacted?: string
	start?: number
	citations?: Citation[]
	annotations?: Obj[]
}

export function streamEncoder(ctx: EncodeContext, id: string, onEnd?: (interaction: Interaction) => void): EventEncoder {
	const show = ctx.includeThoughts === true
	let over = false
	let begun = false
	let seq = 0
	let created = iso()
	const usage: Usage = emptyUsage()
	const addUsage = (u: Partial<Usage>) => {
		for (const k of Object.keys(u) as Array<keyof Usage>) if (u[k] !== undefined) Object.assign(usage, { [k]: u[k] })
	}
	const steps: Obj[] = []
	/** Open blocks by their canonical index; blocks with no step (redacted thinking, MCP) are absent. */
	const open = new Map<number, Open>()
	/** The text step whose block stopped last: its `step.stop` waits, as the next block may continue its text. */
	let textStep: Open | undefined
	let out: SseFrame[] = []
	const emit = (type: string, data: Obj) => out.push({ event: type, data: JSON.stringify({ event_type: type, ...data, event_id: `evt_${seq++}` }) })
	const shell = (status: string, full = false): Interaction => ({
		id,
		object: 'interaction',
		model: ctx.model,
		status,
		created,
		updated: iso(),
		...(full && { steps }),
		...(status !== 'in_progress' && { usage: encodeUsage(usage), ...tierOf(usage) }),
	})

	function begin(ev: StreamEvent) {
		if (begun) return
		begun = true
		if (ev.type === 'start' && ev.created !== undefined) created = iso(ev.created)
		emit('interaction.created', { interaction: shell('in_progress') })
		emit('interaction.status_update', { interaction_id: id, status: 'in_progress' })
	}

	function startBlock(index: number, block: Extract<StreamEvent, { type: 'block_start' }>['block']) {
		if (block.kind === 'text' && textStep && !open.size) {
			open.set(index, Object.assign(textStep, { start: textStep.text.length }))
			textStep = undefined
			return
		}
		// Anything else ends the text, as in a whole answer (steps without a step of their own, a web search or MCP, too).
		endText()
		let o: Open
		if (block.kind === 'text') o = { step: steps.length, kind: 'text', shape: { type: 'model_output' }, text: '', args: '', start: 0, citations: [], annotations: [] }
		else if (block.kind === 'thinking') o = { step: steps.length, kind: 'thought', shape: { type: 'thought' }, text: '', args: '' }
		else if (block.kind === 'redacted_thinking') o = { step: steps.length, kind: 'thought', shape: { type: 'thought' }, text: '', args: '', redacted: block.data }
		else if (block.kind === 'tool_call') {
			const shape = { type: 'function_call', id: packToolCallId(block.id, block.signature), name: block.name, arguments: {} }
			o = { step: steps.length, kind: 'call', shape, text: '', args: '' }
		}
		else return
		steps.push(o.shape)
		open.set(index, o)
		emit('step.start', { index: o.step, step: o.shape })
	}

	function stopBlock(index: number) {
		const o = open.get(index)
		if (!o) return
		open.delete(index)
		// The step as a whole answer shows it (response.ts), kept for the Interaction the route stores.
		if (o.kind === 'text') {
			annotate(o)
			steps[o.step] = { type: 'model_output', content: [{ type: 'text', text: o.text, ...(o.annotations!.length && { annotations: o.annotations }) }] }
			textStep = o
			return
		} else if (o.kind === 'thought') {
			const part = o.redacted !== undefined ? { type: 'redacted_thinking' as const, data: o.redacted } : { type: 'thinking' as const, text: o.text, ...(o.signature && { signature: o.signature }) }
			const step = thoughtStep(part, show && o.redacted === undefined) ?? o.shape
			// Hidden thinking goes whole in one signature, known once the block is complete.
			if ((!show || o.redacted !== undefined) && typeof step.signature === 'string') emit('step.delta', { index: o.step, delta: { type: 'thought_signature', signature: step.signature } })
			steps[o.step] = step
		} else steps[o.step] = { ...o.shape, arguments: parseArgs(o.args) }
		emit('step.stop', { index: o.step })
	}

	/** Sends the citations of the text block that ended, at their place in the step's text (in bytes). */
	function annotate(o: Open) {
		const cited = o.citations!.splice(0)
		if (!cited.length) return
		const offset = utf8Length(o.text.slice(0, o.start))
		const annotations = cited.map((c) => urlCitation(c, offset, o.text.slice(o.start)))
		o.annotations!.push(...annotations)
		emit('step.delta', { index: o.step, delta: { type: 'text_annotation_delta', annotations } })
	}

	/** Ends the text step waiting for more. */
	function endText() {
		if (textStep) emit('step.stop', { index: textStep.step })
		textStep = undefined
	}

	function fail(err: GatewayError) {
		out.push(errorEvent(err, `evt_${seq++}`))
		over = true
	}

	return {
		push(ev, frames) {
			if (over) return
			out = frames
			if (ev.type === 'ping') return
			begin(ev)
			switch (ev.type) {
				case 'block_start':
					return startBlock(ev.index, ev.block)
				case 'text_delta': {
					const o = open.get(ev.index)
					if (!o || o.kind !== 'text') return
					o.text += ev.text
					return emit('step.delta', { index: o.step, delta: { type: 'text', text: ev.text } })
				}
				case 'thinking_delta': {
					const o = open.get(ev.index)
					if (!o || o.kind !== 'thought') return
					o.text += ev.text
					if (show) emit('step.delta', { index: o.step, delta: { type: 'thought_summary', content: { type: 'text', text: ev.text } } })
					return
				}
				case 'signature_delta': {
					const o = open.get(ev.index)
					if (!o || o.kind !== 'thought') return
					o.signature = (o.signature ?? '') + ev.signature
					if (show) emit('step.delta', { index: o.step, delta: { type: 'thought_signature', signature: ev.signature } })
					return
				}
				case 'json_delta': {
					const o = open.get(ev.index)
					if (!o || o.kind !== 'call') return
					o.args += ev.json
					return emit('step.delta', { index: o.step, delta: { type: 'arguments_delta', arguments: ev.json } })
				}
				case 'citation': {
					const o = open.get(ev.index)
					if (o?.kind === 'text') o.citations!.push(ev.citation)
					return
				}
				case 'block_stop':
					return stopBlock(ev.index)
				case 'usage':
					return addUsage(ev.usage)
				case 'start':
					if (ev.usage) addUsage(ev.usage)
					return
				case 'finish': {
					for (const index of [...open.keys()]) stopBlock(index)
					endText()
					const status = statusOf(ev.reason)
					emit('interaction.completed', { interaction: shell(status) })
					out.push(DONE_FRAME)
					over = true
					onEnd?.(shell(status, true))
					return
				}
				case 'error':
					return fail(ev.error)
			}
		},
		end(frames) {
			if (over) return
			out = frames
			// Upstream decoders end a cut stream with `error`; reaching here means the event source stopped early.
			begin({ type: 'ping' })
			fail(new GatewayError('upstream', 'upstream stream ended unexpectedly', { retryable: true }))
		},
		get done() {
			return over
		},
	}
}

function parseArgs(s: string): Obj {
	if (!s) return {}
	try {
		const v = JSON.parse(s)
		return v && typeof v === 'object' && !Array.isArray(v) ? v : {}
	} catch {
		return {}
	}
}
