/**
 * The reconnecting core of the shared buses (Redis pub/sub in lib/bus.ts, PostgreSQL LISTEN/NOTIFY in lib/pg-bus.ts):
 * the topics and their handlers, the outbox kept while down, and the session's lifecycle. Both are fire and forget (a
 * message published while an instance is not subscribed never reaches it), and neither client says reliably when it
 * stopped hearing, so the bus owns its connections: a session is opened by the transport, and when it closes or a
 * heartbeat goes unanswered it is dropped and a new one is opened with backoff, for as long as it takes, also when the
 * server is down at start. A new session runs every subscriber's `resync`: whatever was published meanwhile is treated
 * as missed. Messages this instance could not publish meanwhile are sent once it is back.
 *
 * A transport says how to open a session, subscribe a topic on it, send, beat and ping; everything else is here.
 * @module
 */
import type { Bus } from './bus'

/** Sent when this instance lost messages it could not publish during an outage: every instance resyncs. */
export const RESYNC_TOPIC = 'bus-resync'
/** Messages kept while the session is down (identical ones once); beyond, the oldest go and a resync is broadcast. */
const OUTBOX_MAX = 10_000

export type ReconnectingBusOptions = {
	/** How long the bus waits for the first session before it resolves anyway (it keeps trying). Default 2 s. */
	connectWaitMs?: number
	/** Delay before reconnecting: `minMs` doubled per failed attempt up to `maxMs`, with jitter. Default 100 ms, 5 s. */
	retry?: { minMs: number; maxMs: number }
	/**
	 * How often the session is checked, to notice a connection that died without closing (Redis pings both connections;
	 * PostgreSQL NOTIFYs itself and waits for it, so a LISTEN that no longer delivers counts too). Default 15 s.
	 */
	heartbeatMs?: number
	/** Told when the subscription (the session) is lost or the first one cannot be made (with the error), and when it is back. */
	onState?: (subscribed: boolean, error?: unknown) => void
}

/** One session: the transport's connections `conn`, up once subscribed, dead once dropped (`lost`, once). */
export type Session<C> = { conn: C; up: boolean; dead: boolean; lost(e: unknown): void }

/** What the core gives its transport. */
export type Core<C> = {
	/** A message that arrived on `topic`: delivered to its handlers (a resync message resyncs every subscriber). */
	hear(topic: string, message: string): void
	/** Every topic subscribed to so far. */
	topics(): IterableIterator<string>
	/** The session open or being opened, if any. */
	current(): Session<C> | undefined
}

export type Transport<C> = {
	kind: 'redis' | 'postgres'
	/** Begins the errors of `within` ('redis', 'bus'). */
	label: string
	/** The error when the session closed while being opened. */
	interrupted: string
	/** A new session's connections, wired to call `s.lost` when they close; not awaited. */
	create(s: Session<C>): C
	/** Connects and subscribes every topic (also those registered meanwhile). Rejects when any step fails. */
	start(s: Session<C>): Promise<void>
	/** Drops the session's connections (it is over; the next session has new ones). */
	drop(s: Session<C>): void
	/** Resolves to how many other instances the message reached; rejects when it could not be sent. */
	send(s: Session<C>, topic: string, message: string): Promise<number>
	/** Resolves when the session answered; the core times it out. */
	beat(s: Session<C>): Promise<unknown>
	/** Whether the server answers. */
	ping(s: Session<C>): Promise<boolean>
	/** A topic registered while the session is up. */
	subscribe?(s: Session<C>, topic: string): void
	/** Resolves once the subscriptions asked of an up session are active. */
	settled?(s: Session<C>): Promise<unknown>
	/** Forgets what was heard in part (a resync, or the session down). */
	forget?(): void
	/** Waits for a dropped session's connections to end, on `close`. */
	end?(s: Session<C>): Promise<void>
}

/** A topic's subscribers on one instance. */
export type Topic = { handlers: Set<(m: string) => void>; resyncs: Set<() => void> }

/**
 * Hands `message` to each of the topic's handlers. A handler that throws is told to `onError`: it must neither stop
 * the handlers after it nor reach the publisher.
 */
export function deliverTo(topic: Topic | undefined, message: string, onError: (e: unknown) => void): void {
	for (const h of topic?.handlers ?? []) {
		try {
			h(message)
		} catch (e) {
			onError(e)
		}
	}
}

/**
 * The bus over `transport`. Resolves once subscribed or after `connectWaitMs`; it never fails for an unreachable server:
 * it then runs on its own and joins once the server answers.
 * @example return reconnectingBus((core) => ({ kind: 'redis', label: 'redis', ... }), onError, opts)
 */
export async function reconnectingBus<C>(make: (core: Core<C>) => Transport<C>, onError: (e: unknown) => void, opts: ReconnectingBusOptions): Promise<Bus> {
	const retry = opts.retry ?? { minMs: 100, maxMs: 5_000 }
	const heartbeatMs = opts.heartbeatMs ?? 15_000

	const topics = new Map<string, Topic>()
	const outbox = new Map<string, [topic: string, message: string]>()
	let overflowed = false
	let cur: Session<C> | undefined
	let opening: Promise<void> | undefined
	let retryTimer: ReturnType<typeof setTimeout> | undefined
	let heartbeat: ReturnType<typeof setInterval> | undefined
	let attempt = 0
	let announcedDown = false
	let closed = false

	const transport = make({
		hear: (topic, message) => {
			if (topic === RESYNC_TOPIC) resyncAll()
			else deliver(topic, message)
		},
		topics: () => topics.keys(),
		current: () => cur,
	})

	function deliver(topic: string, message: string) {
		deliverTo(topics.get(topic), message, onError)
	}
	function resyncAll() {
		transport.forget?.()
		for (const t of topics.values())
			for (const r of t.resyncs) {
				try {
					r()
				} catch (e) {
					onError(e)
				}
			}
	}
	const announceDown = (e: unknown) => {
		if (announcedDown || closed) return
		announcedDown = true
		opts.onState?.(false, e)
	}

	function queue(topic: string, message: string) {
		const k = `${topic}\n${message}`
		outbox.delete(k)
		outbox.set(k, [topic, message])
		if (outbox.size > OUTBOX_MAX) {
			outbox.delete(outbox.keys().next().value!)
			overflowed = true
		}
	}
	/** Resolves to how many other instances the message reached, undefined when it failed (then kept, when `keep`). */
	function send(s: Session<C>, topic: string, message: string, keep = true): Promise<number | undefined> {
		return transport.send(s, topic, message).catch((e) => {
			// Kept for the next session; a lost connection is reported once, by the session.
			if (keep && topic === RESYNC_TOPIC) overflowed = true
			else if (keep) queue(topic, message)
			if (!s.dead) onError(e)
			return undefined
		})
	}
	function flushOutbox(s: Session<C>) {
		if (overflowed) {
			overflowed = false
			void send(s, RESYNC_TOPIC, '')
		}
		const items = [...outbox.values()]
		outbox.clear()
		for (const [topic, message] of items) void send(s, topic, message)
	}

	/** Opens a session: the transport's connections, every topic subscribed. Throws (and drops it) when any step fails. */
	async function open(): Promise<void> {
		const s = {
			up: false,
			dead: false,
			lost(e) {
				if (s.dead) return
				s.dead = true
				transport.drop(s)
				if (cur === s) cur = undefined
				if (s.up) down(e)
			},
		} as Session<C>
		s.conn = transport.create(s)
		cur = s
		try {
			await transport.start(s)
			if (s.dead || closed) throw new Error(transport.interrupted)
		} catch (e) {
			s.lost(e)
			throw e
		}
		s.up = true
		attempt = 0
		if (announcedDown) {
			announcedDown = false
			opts.onState?.(true)
		}
		// Subscribed from here on; anything published before may have been missed (Redis and NOTIFY keep nothing for us).
		resyncAll()
		flushOutbox(s)
		clearInterval(heartbeat)
		heartbeat = setInterval(() => {
			within(transport.beat(s), Math.min(5_000, heartbeatMs), `${transport.label} heartbeat`).catch((e) => s.lost(e))
		}, heartbeatMs)
		heartbeat.unref?.()
	}

	function down(e: unknown) {
		clearInterval(heartbeat)
		transport.forget?.()
		announceDown(e)
		schedule()
	}
	function schedule() {
		if (closed || retryTimer || opening || cur) return
		const base = Math.min(retry.maxMs, retry.minMs * 2 ** Math.min(attempt++, 20))
		retryTimer = setTimeout(
			() => {
				retryTimer = undefined
				void tryOpen()
			},
			base / 2 + (Math.random() * base) / 2,
		)
		retryTimer.unref?.()
	}
	function tryOpen(): Promise<void> {
		if (closed || cur?.up) return Promise.resolve()
		opening ??= open().then(
			() => {
				opening = undefined
			},
			(e) => {
				opening = undefined
				announceDown(e)
				schedule()
			},
		)
		return opening
	}

	const first = tryOpen()
	await Promise.race([first, Bun.sleep(opts.connectWaitMs ?? 2_000)])

	return {
		kind: transport.kind,
		publish(topic, message) {
			deliver(topic, message) // this instance at once, even while the session is down
			if (cur?.up) void send(cur, topic, message)
			else queue(topic, message)
		},
		async publishCounted(topic, message) {
			deliver(topic, message)
			const s = cur
			if (!s?.up) {
				queue(topic, message)
				return 0
			}
			return (await send(s, topic, message)) ?? 0
		},
		async sendOthers(topic, message, keep) {
			const s = cur
			if (s?.up) return send(s, topic, message, keep)
			if (keep) queue(topic, message)
			return undefined
		},
		subscribe(topic, handler, resync) {
			const t = topics.get(topic) ?? { handlers: new Set(), resyncs: new Set() }
			t.handlers.add(handler)
			if (resync) t.resyncs.add(resync)
			topics.set(topic, t)
			// A session being opened picks the topic up itself; none open: the next one will.
			if (cur?.up) transport.subscribe?.(cur, topic)
		},
		async ready() {
			if (opening) await opening
			if (cur?.up && transport.settled) await transport.settled(cur)
		},
		async close() {
			closed = true
			clearTimeout(retryTimer)
			clearInterval(heartbeat)
			const s = cur
			s?.lost(new Error('bus closed'))
			if (s) await transport.end?.(s)
		},
		async ping() {
			const s = cur
			if (!s?.up) return false
			try {
				// Within a readiness probe's own timeout (Kubernetes' default is 1 s): a stalled server is unreachable.
				return await within(transport.ping(s), PING_MS, `${transport.label} ping`)
			} catch {
				return false
			}
		},
		subscribed: () => !!cur?.up,
	}
}

/** How long /health waits for the bus's server to answer a ping. */
const PING_MS = 500

/** `p`, or a rejection once `ms` have passed (a connection that stopped answering never settles by itself). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined
	const late = new Promise<never>((_, no) => {
		timer = setTimeout(() => no(new Error(`${what} timed out after ${ms} ms`)), ms)
	})
	return Promise.race([p, late]).finally(() => clearTimeout(timer))
}
