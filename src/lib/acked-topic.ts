/**
 * A bus topic whose publisher can wait until the other instances have applied its message: a change made through one
 * instance's management API (a channel disabled, a key's models narrowed, a key enabled again) must hold on every
 * instance's very next request once the API has answered, and pub/sub (Redis, or PostgreSQL NOTIFY) delivers with no
 * such promise (the next request can reach another instance before the message does, or while it is still applying it).
 *
 * Each message carries an id; each instance that applies one answers on `<topic>:applied`, and the publisher counts
 * the answers against `publishCounted` (how many other instances' subscriptions Redis handed the message to, or how
 * many other instances' LISTEN sessions there are), giving up after `waitMs` (an instance whose database stopped
 * answering). The publisher applies its own message itself and ignores its echo. On the in-process bus there is no one
 * to wait for.
 * @module
 */
import type { Bus } from './bus'
import { randomString } from './ids'

export type AckedTopic = {
	/** Applies `message` here, sends it to the other instances and resolves once they have applied it (or `waitMs` passed). */
	publish(message: string): Promise<void>
}

/**
 * @param apply what a message does on an instance; the answer is sent once its promise resolves (or at once).
 * @param resync run when the bus subscribes again after an outage (messages may have been missed).
 * @example const t = ackedTopic(bus, 'token-invalidate', (hash) => cache.delete(hash), () => cache.clear(), 2_000)
 * await t.publish(hash) // every instance the bus reaches has dropped the key
 */
export function ackedTopic(bus: Bus, topic: string, apply: (message: string) => void | Promise<void>, resync: (() => void) | undefined, waitMs: number): AckedTopic {
	const me = randomString(12)
	let sent = 0
	/** This instance's messages waiting for answers: the instances that answered, and a wake-up. */
	const waiting = new Map<string, { from: Set<string>; wake: () => void }>()
	const answers = `${topic}:applied`

	bus.subscribe(
		topic,
		(raw) => {
			const sp = raw.indexOf(' ')
			// Without an id: from an instance of an earlier version (a rolling upgrade), which waits for no answer.
			if (sp < 0) return void (async () => apply(raw))().catch(() => {})
			const id = raw.slice(0, sp)
			if (id.startsWith(`${me}:`)) return // our own echo: applied when published
			void (async () => apply(raw.slice(sp + 1)))().then(
				() => bus.publish(answers, `${id} ${me}`),
				() => {}, // not applied: no answer, the publisher gives up after waitMs
			)
		},
		resync,
	)
	bus.subscribe(answers, (m) => {
		const [id, from] = m.split(' ')
		const w = waiting.get(id!)
		if (!w || !from || from === me) return
		w.from.add(from)
		w.wake()
	})

	return {
		async publish(message) {
			const id = `${me}:${++sent}`
			const w = { from: new Set<string>(), wake: () => {} }
			waiting.set(id, w)
			try {
				// Sent before applying here, so the others apply it while this instance does.
				const reached = bus.publishCounted(topic, `${id} ${message}`)
				await apply(message)
				const others = await reached
				const deadline = Date.now() + waitMs
				while (w.from.size < others && Date.now() < deadline) {
					await new Promise<void>((resolve) => {
						const timer = setTimeout(resolve, deadline - Date.now())
						w.wake = () => {
							clearTimeout(timer)
							resolve()
						}
					})
				}
			} finally {
				waiting.delete(id)
			}
		},
	}
}
