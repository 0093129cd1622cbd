/**
 * Several answers in one client stream (OpenAI `n`, Gemini `candidateCount`), for a client protocol whose single
 * answer encoder can name its answer's index (`EncodeContext.choice`): one such encoder per answer, fed that answer's
 * events, all opened by the same `start` so the client sees one id; the protocol's own closing written once, after
 * every answer ended. The canonical answer stays one answer: a choice index lives only here and in the relay.
 * @module
 */
import type { StreamEvent } from '../core/events'
import type { Usage } from '../core/ir'
import type { SseFrame } from '../core/sse'
import type { ChoicesEncoder } from './codec'
import type { EventEncoder } from './stream-machine'

export type ChoicesParts = {
	/** The encoder of one answer (made with `ctx.choice` set to its index). */
	encoderOf(choice: number): EventEncoder
	/** The stream's id as the client sees it, from the first answer's (made once, so every answer shows the same). */
	idOf(id: string): string
	/** The protocol's closing once every answer ended whole (OpenAI: the usage chunk, `[DONE]`), with the whole request's usage. */
	close(out: SseFrame[], usage: Partial<Usage>, start: Extract<StreamEvent, { type: 'start' }>): void
}

/**
 * A choices encoder of `n` answers. Usage events are the whole request's: every answer's encoder is given them (a
 * protocol that shows usage on each answer's last chunk shows the total so far) and `close` the last. The first error
 * ends the stream with that error; an answer left unfinished ends it with its encoder's error.
 * @example const enc = choicesOf(2, parts); enc.push({ choice: 1, event }, out)
 */
export function choicesOf(n: number, parts: ChoicesParts): ChoicesEncoder {
	const encoders = Array.from({ length: n }, (_, i) => parts.encoderOf(i))
	const started = new Array<boolean>(n).fill(false)
	let start: Extract<StreamEvent, { type: 'start' }> | undefined
	let usage: Partial<Usage> = {}
	let over = false
	const open = (choice: number, out: SseFrame[]) => {
		if (started[choice]) return
		started[choice] = true
		start ??= { type: 'start', id: parts.idOf(''), model: '', created: Math.floor(Date.now() / 1000) }
		encoders[choice]!.push(start, out)
	}
	return {
		push({ choice, event }, out) {
			if (over || !encoders[choice]) return
			switch (event.type) {
				case 'start':
					// The first answer's id and time stand for all; its usage (Anthropic's input) is the relay's to sum.
					start ??= { type: 'start', id: parts.idOf(event.id), model: event.model, created: event.created ?? Math.floor(Date.now() / 1000) }
					open(choice, out)
					return
				case 'usage':
					usage = { ...usage, ...event.usage }
					for (let i = 0; i < n; i++) {
						open(i, out)
						encoders[i]!.push(event, out)
					}
					return
				case 'error':
					open(choice, out)
					encoders[choice]!.push(event, out)
					over = true
					return
				default:
					open(choice, out)
					encoders[choice]!.push(event, out)
			}
		},
		end(out) {
			if (over) return
			over = true
			const before = out.length
			for (let i = 0; i < n; i++) {
				open(i, out)
				encoders[i]!.end(out)
				// An answer that did not finish: its encoder's error frame ends the stream.
				if (out.length > before) return
			}
			parts.close(out, usage, start!)
		},
		get done() {
			return over
		},
	}
}
