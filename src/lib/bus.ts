/**
 * A tiny publish/subscribe bus for cache invalidations across instances. With REDIS_URL it uses Redis pub/sub
 * (Bun's native client); without, on PostgreSQL, LISTEN/NOTIFY (lib/pg-bus.ts); on PGlite it is in-process only
 * (one process per database).
 *
 * Redis pub/sub is fire and forget: a message published while an instance is not subscribed never reaches it. And
 * Bun's client does not subscribe again when it reconnects by itself (Bun 1.4.5, measured: after `autoReconnect` the
 * client is `connected` but `PUBSUB NUMSUB` no longer counts it, so the instance silently stops hearing the others),
 * and it gives up for good after `maxRetries` (about 30 s down). So the Redis bus owns its connections: a session is
 * a publisher and a subscriber client opened with `autoReconnect: false`; when either closes (`onclose`, see
 * https://bun.com/docs/runtime/redis "Connection Events"), or a heartbeat goes unanswered, the session is dropped and a
 * new one is opened with backoff, for as long as it takes, also when Redis is down at start. A new session subscribes
 * to every topic, and then every subscriber's `resync` runs: whatever was published meanwhile is treated as missed.
 * Messages this instance could not publish meanwhile are sent once it is back.
 * @module
 */

export type Bus = {
	/** Delivers `message` to this instance's handlers at once and, through Redis or NOTIFY, to every other instance. */
	publish(topic: string, message: string): void
	/**
	 * `publish`, resolving to how many other instances' subscriptions Redis handed it to (its PUBLISH reply, less this
	 * instance's own; on PostgreSQL the other instances' LISTEN sessions), for a publisher that waits for their answers.
	 * 0 on the in-process bus, and while the bus is down (the message is then queued as `publish` queues it). Never rejects.
	 */
	publishCounted(topic: string, message: string): Promise<number>
	/**
	 * `handler` receives every message on `topic`. `resync`, when given, runs each time the bus subscribes again after
	 * a time it was not subscribed (Redis or the LISTEN session down or cut): messages may have been missed, so the subscriber drops or
	 * reloads whatever they could have invalidated.
	 */
	subscribe(topic: string, handler: (message: string) => void, resync?: () => void): void
	close(): Promise<void>
	/** Resolves once every subscription made so far is active (Redis SUBSCRIBE is asynchronous), or Redis is down. */
	ready(): Promise<void>
	readonly kind: 'memory' | 'redis' | 'postgres'
	/** Whether Redis (or the PostgreSQL bus session) answers (health). */
	ping(): Promise<boolean>
	/** Whether messages from other instances reach this one now: false while the Redis subscription (or LISTEN session) is down. */
	subscribed(): boolean
}

/**
 * Whether a change made on another instance is heard here at once, for the caches that poll when it is not (key
 * cache, catalog): through a shared bus while it is subscribed; an in-process bus hears only this process, which is
 * every instance there is on PGlite (one process per data directory) but not on a PostgreSQL that others may share.
 * @example const hears = hearsOthers(bus, db.kind); if (!hears()) reloadSoon()
 */
export function hearsOthers(bus: Bus, dbKind: string): () => boolean {
	return bus.kind === 'memory' ? () => dbKind !== 'postgres' : () => bus.subscribed()
}

/** Every channel's name begins with this, after REDIS_PREFIX. */
const CHANNEL = 'switchboard:'
/** Sent when this instance lost messages it could not publish during an outage: every instance resyncs. */
const RESYNC_TOPIC = 'bus-resync'
/** Messages kept while Redis is down (identical ones once); beyond, the oldest go and a resync is broadcast. */
const OUTBOX_MAX = 10_000

export function memoryBus(): Bus {
	const handlers = new Map<string, Set<(m: string) => void>>()
	return {
		kind: 'memory',
		publish(topic, message) {
			for (const h of handlers.get(topic) ?? []) h(message)
		},
		publishCounted(topic, message) {
			this.publish(topic, message)
			return Promise.resolve(0)
		},
		subscribe(topic, handler) {
			// One process: nothing can be missed, so `resync` never runs.
			const set = handlers.get(topic) ?? new Set()
			set.add(handler)
			handlers.set(topic, set)
		},
		close: async () => {},
		ready: async () => {},
		ping: async () => true,
		subscribed: () => true,
	}
}

export type RedisBusOptions = {
	/** How long `redisBus` waits for the first session before it resolves anyway (it keeps trying). Default 2 s. */
	connectWaitMs?: number
	/** Delay before reconnecting: `minMs` doubled per failed attempt up to `maxMs`, with jitter. Default 100 ms, 5 s. */
	retry?: { minMs: number; maxMs: number }
	/** How often both connections are pinged, to notice one that died without closing. Default 15 s. */
	heartbeatMs?: number
	/** Put before every channel name (REDIS_PREFIX): buses with different prefixes on one Redis do not hear each other. */
	prefix?: string
	/** Told when the subscription is lost or the first one cannot be made (with the error), and when it is back. */
	onState?: (subscribed: boolean, error?: unknown) => void
}

type Topic = { handlers: Set<(m: string) => void>; resyncs: Set<() => void> }
type Session = {
	pub: Bun.RedisClient
	sub: Bun.RedisClient
	/** Topics SUBSCRIBEd on this session, and those requests. */
	topics: Set<string>
	pending: Promise<unknown>[]
	up: boolean
	dead: boolean
	lost(e: unknown): void
}

/**
 * The Redis bus. Resolves once subscribed or after `connectWaitMs`; it never fails for an unreachable Redis (only for
 * a malformed URL): it then runs on its own and joins once Redis answers.
 *
 * @example
 * const bus = await redisBus('redis://127.0.0.1:6379', (e) => log.warn('redis error', { error: String(e) }))
 * bus.subscribe('token-invalidate', forget, () => cache.clear())
 */
export async function redisBus(url: string, onError: (e: unknown) => void, opts: RedisBusOptions = {}): Promise<Bus> {
	const prefix = (opts.prefix ?? '') + CHANNEL
	const retry = opts.retry ?? { minMs: 100, maxMs: 5_000 }
	const heartbeatMs = opts.heartbeatMs ?? 15_000
	const client = () => new Bun.RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 2_000 })
	client().close() // a malformed URL throws here, at start, rather than in every retry

	const topics = new Map<string, Topic>()
	const outbox = new Map<string, [topic: string, message: string]>()
	let overflowed = false
	let cur: Session | undefined
	let opening: Promise<void> | undefined
	let retryTimer: ReturnType<typeof setTimeout> | undefined
	let heartbeat: ReturnType<typeof setInterval> | undefined
	let attempt = 0
	let announcedDown = false
	let closed = false

	const deliver = (topic: string, message: string) => {
		for (const h of topics.get(topic)?.handlers ?? []) h(message)
	}
	const dispatch = (message: string, channel: string) => {
		const topic = channel.slice(prefix.length)
		if (topic === RESYNC_TOPIC) resyncAll()
		else deliver(topic, message)
	}
	function resyncAll() {
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
	/** Resolves to the PUBLISH reply (subscriptions reached, this instance's own included), 0 when it failed. */
	function send(s: Session, topic: string, message: string): Promise<number> {
		return s.pub.publish(prefix + topic, message).then(Number, (e) => {
			// Kept for the next session; a lost connection is reported once, by the session.
			if (topic === RESYNC_TOPIC) overflowed = true
			else queue(topic, message)
			if (!s.dead) onError(e)
			return 0
		})
	}
	function flushOutbox(s: Session) {
		if (overflowed) {
			overflowed = false
			send(s, RESYNC_TOPIC, '')
		}
		const items = [...outbox.values()]
		outbox.clear()
		for (const [topic, message] of items) send(s, topic, message)
	}

	function subscribeOn(s: Session, topic: string) {
		s.topics.add(topic)
		s.pending.push(s.sub.subscribe(prefix + topic, dispatch).catch((e) => s.lost(e)))
	}

	/** Opens a session: both connections, every topic subscribed. Throws (and closes it) when any step fails. */
	async function open(): Promise<void> {
		const s: Session = {
			pub: client(),
			sub: client(),
			topics: new Set(),
			pending: [],
			up: false,
			dead: false,
			lost(e) {
				if (s.dead) return
				s.dead = true
				s.pub.close()
				s.sub.close()
				if (cur === s) cur = undefined
				if (s.up) down(e)
			},
		}
		cur = s
		s.pub.onclose = (e) => s.lost(e)
		s.sub.onclose = (e) => s.lost(e)
		try {
			await within(Promise.all([s.pub.connect(), s.sub.connect()]), 5_000, 'connect')
			await within(s.sub.subscribe([prefix + RESYNC_TOPIC], dispatch), 5_000, 'subscribe')
			// Topics registered while an await was pending are caught up here, until none is left.
			for (let todo = [...topics.keys()]; todo.length; todo = [...topics.keys()].filter((t) => !s.topics.has(t))) {
				for (const t of todo) s.topics.add(t)
				await within(s.sub.subscribe(todo.map((t) => prefix + t), dispatch), 5_000, 'subscribe')
			}
			if (s.dead || closed) throw new Error('redis connection closed while subscribing')
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
		// Subscribed from here on; anything published before may have been missed (Redis keeps nothing for us).
		resyncAll()
		flushOutbox(s)
		clearInterval(heartbeat)
		heartbeat = setInterval(() => {
			within(Promise.all([s.pub.ping(), s.sub.ping()]), Math.min(5_000, heartbeatMs), 'heartbeat').catch((e) => s.lost(e))
		}, heartbeatMs)
		heartbeat.unref?.()
	}

	function down(e: unknown) {
		clearInterval(heartbeat)
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
		kind: 'redis',
		publish(topic, message) {
			deliver(topic, message) // this instance at once, even if Redis is down
			if (cur?.up) send(cur, topic, message)
			else queue(topic, message)
		},
		async publishCounted(topic, message) {
			deliver(topic, message)
			const s = cur
			if (!s?.up) {
				queue(topic, message)
				return 0
			}
			const reached = await send(s, topic, message)
			return Math.max(0, reached - (s.topics.has(topic) ? 1 : 0))
		},
		subscribe(topic, handler, resync) {
			const t = topics.get(topic) ?? { handlers: new Set(), resyncs: new Set() }
			t.handlers.add(handler)
			if (resync) t.resyncs.add(resync)
			topics.set(topic, t)
			// A session being opened picks the topic up itself; none open: the next one will.
			if (cur?.up && !cur.topics.has(topic)) subscribeOn(cur, topic)
		},
		async ready() {
			if (opening) await opening
			if (cur?.up) await Promise.all(cur.pending)
		},
		async close() {
			closed = true
			clearTimeout(retryTimer)
			clearInterval(heartbeat)
			cur?.lost(new Error('bus closed'))
		},
		async ping() {
			const s = cur
			if (!s?.up) return false
			try {
				return (await within(s.pub.ping(), 2_000, 'ping')) === 'PONG'
			} catch {
				return false
			}
		},
		subscribed: () => !!cur?.up,
	}
}

/** `p`, or a rejection once `ms` have passed (a connection that stopped answering never settles by itself). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined
	const late = new Promise<never>((_, no) => {
		timer = setTimeout(() => no(new Error(`redis ${what} timed out after ${ms} ms`)), ms)
	})
	return Promise.race([p, late]).finally(() => clearTimeout(timer))
}
