/**
 * An interaction's stream events (the `data` of each, whose `event_id`s are `evt_0`, `evt_1`… in order), for
 * `GET /interactions/{id}?stream=true`: the events of an interaction that was not run in the background are made
 * again from the kept resource, in the order and shapes the live stream has (protocols/gemini-interactions/
 * stream-encode.ts), one delta per piece of content; `last_event_id` resumes after the event it names
 * (https://ai.google.dev/gemini-api/docs/background-execution).
 * @module
 */
import { badRequest } from '../../core/errors'
import { formatSse, SSE_KEEPALIVE } from '../../core/sse'
import { errorEvent } from '../../protocols/gemini-interactions/error'
import { DONE_FRAME } from '../../protocols/gemini-interactions/stream-encode'
import { KEEPALIVE_MS, sseResponse as relaySse } from '../../relay/sse-response'
import { SHUTTING_DOWN } from '../../relay/stream-relay'
import { isObject } from '../../core/json'

type Obj = Record<string, unknown>

/** The events of a finished interaction, made from the resource (its output steps). */
export function eventsOf(interaction: Obj): string[] {
	const out: string[] = []
	const emit = (type: string, data: Obj) => out.push(JSON.stringify({ event_type: type, ...data, event_id: `evt_${out.length}` }))
	const { steps, usage, ...head } = interaction
	emit('interaction.created', { interaction: { ...head, status: 'in_progress' } })
	emit('interaction.status_update', { interaction_id: interaction.id, status: 'in_progress' })
	;(Array.isArray(steps) ? steps : []).forEach((s: unknown, index) => {
		if (!isObject(s)) return
		if (s.type === 'model_output') {
			emit('step.start', { index, step: { type: 'model_output' } })
			for (const c of Array.isArray(s.content) ? s.content : []) {
				if (!isObject(c) || typeof c.text !== 'string') continue
				emit('step.delta', { index, delta: { type: 'text', text: c.text } })
				// Citations once their text is whole, as the live stream sends them.
				if (Array.isArray(c.annotations) && c.annotations.length) emit('step.delta', { index, delta: { type: 'text_annotation_delta', annotations: c.annotations } })
			}
		} else if (s.type === 'thought') {
			emit('step.start', { index, step: { type: 'thought' } })
			for (const c of Array.isArray(s.summary) ? s.summary : []) if (isObject(c)) emit('step.delta', { index, delta: { type: 'thought_summary', content: c } })
			if (typeof s.signature === 'string') emit('step.delta', { index, delta: { type: 'thought_signature', signature: s.signature } })
		} else if (s.type === 'function_call') {
			emit('step.start', { index, step: { ...s, arguments: {} } })
			emit('step.delta', { index, delta: { type: 'arguments_delta', arguments: JSON.stringify(s.arguments ?? {}) } })
		} else emit('step.start', { index, step: s })
		emit('step.stop', { index })
	})
	emit('interaction.completed', { interaction: { ...head, ...(usage !== undefined && { usage }) } })
	return out
}

/** Where a replay after `lastEventId` starts (0 without one); a 400 when it names no event given so far. */
export function resumeAt(events: string[], lastEventId: string | undefined): number {
	if (lastEventId === undefined || lastEventId === '') return 0
	const n = /^evt_(\d+)$/.exec(lastEventId)?.[1]
	const at = n === undefined ? -1 : Number(n)
	if (at < 0 || at >= events.length || !events[at]!.includes(`"event_id":"${lastEventId}"`))
		throw badRequest(`last_event_id '${lastEventId}' is not an event of this interaction`, 'last_event_id')
	return at + 1
}

/** The event after the last of `events`, or undefined; used to close a cancelled stream. */
export const nextEventId = (events: string[]): string => `evt_${events.length}`

/** The output steps the events of a stream built so far (a cancelled interaction's). */
export function stepsOf(events: string[]): Obj[] {
	const steps: Obj[] = []
	const args = new Map<number, string>()
	const annotations = new Map<number, unknown[]>()
	for (const raw of events) {
		const e = JSON.parse(raw) as Obj
		const i = typeof e.index === 'number' ? e.index : -1
		if (e.event_type === 'step.start' && isObject(e.step)) {
			const s = { ...e.step }
			if (s.type === 'model_output') s.content = []
			if (s.type === 'thought' && !s.signature) delete s.signature
			steps[i] = s
		} else if (e.event_type === 'step.delta' && isObject(e.delta) && steps[i]) {
			const s = steps[i]!
			const d = e.delta
			if (d.type === 'text' && Array.isArray(s.content)) s.content.push({ type: 'text', text: d.text })
			else if (d.type === 'thought_summary') s.summary = [...(Array.isArray(s.summary) ? s.summary : []), d.content]
			else if (d.type === 'thought_signature') s.signature = d.signature
			else if (d.type === 'arguments_delta') args.set(i, (args.get(i) ?? '') + String(d.arguments))
			else if (d.type === 'text_annotation_delta' && Array.isArray(d.annotations)) annotations.set(i, [...(annotations.get(i) ?? []), ...d.annotations])
		}
	}
	for (const [i, a] of args) {
		try {
			steps[i]!.arguments = JSON.parse(a)
		} catch {
			// arguments cut short: the call as started
		}
	}
	// A run of text deltas is one text item, as in a whole answer, its annotations spanning the whole (stream-encode.ts).
	steps.forEach((s, i) => {
		if (s?.type !== 'model_output' || !Array.isArray(s.content)) return
		const cited = annotations.get(i)
		s.content = [{ type: 'text', text: s.content.map((c: Obj) => c.text).join(''), ...(cited?.length && { annotations: cited }) }]
	})
	return steps.filter(Boolean)
}

/**
 * An SSE response of event data (each frame named by its `event_type`), ending when `source` does: after an
 * `interaction.completed`, with Google's end marker, as the live stream does. One still running when the shutdown's
 * grace period ends closes with the `error` event (relay/stream-relay.ts `cutStreams`).
 */
export function sseResponse(source: AsyncIterable<string> | string[]): Promise<Response> {
	async function* frames(): AsyncGenerator<string | Uint8Array> {
		// The headers go out with a first chunk: at once, though the first event may be a while (a run elsewhere).
		yield SSE_KEEPALIVE
		let last = ''
		for await (const value of source) {
			last = /"event_type":"([^"]+)"/.exec(value)?.[1] ?? 'message'
			yield `event: ${last}\ndata: ${value}\n\n`
		}
		if (last === 'interaction.completed') yield `event: ${DONE_FRAME.event}\ndata: ${DONE_FRAME.data}\n\n`
	}
	return relaySse(frames(), () => {}, {}, KEEPALIVE_MS, SHUTDOWN_EVENT)
}

const SHUTDOWN_EVENT = formatSse(errorEvent(SHUTTING_DOWN))
