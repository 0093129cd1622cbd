/**
 * A tiny publish/subscribe bus for cache invalidations across instances. With REDIS_URL it uses Redis pub/sub
 * (Bun's native client), on PostgreSQL with LISTEN/NOTIFY behind it for what cannot be handed to Redis
 * (lib/bus-fallback.ts); without, on PostgreSQL, LISTEN/NOTIFY alone (lib/pg-bus.ts); on PGlite it is in-process only
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
 * Messages this instance could not publish meanwhile are sent once it is back. That reconnecting core is shared with
 * the PostgreSQL bus (lib/bus-core.ts); here is what is Redis's own.
 * @module
 */
import { type ReconnectingBusOptions, reconnectingBus, RESYNC_TOPIC, within } from './bus-core'

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
	/**
	 * Sends `message` to the other instances only (this one's handlers are not run), now: resolves to how many it
	 * reached, or undefined when it was not sent (the bus down, or the send failed), in which case it is kept for the
	 * next session only when `keep`. Never rejects. The shared buses have it, for a bus that falls back on another.
	 */
	sendOthers?(topic: string, message: string, keep: boolean): Promise<number | undefined>
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

export type RedisBusOptions = ReconnectingBusOptions & {
	/** Put before every channel name (REDIS_PREFIX): buses with different prefixes on one Redis do not hear each other. */
	prefix?: string
}

type Connections = {
	pub: Bun.RedisClient
	sub: Bun.RedisClient
	/** Topics SUBSCRIBEd on this session, and those requests. */
	topics: Set<string>
	pending: Promise<unknown>[]
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
	const client = () => new Bun.RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 2_000 })
	client().close() // a malformed URL throws here, at start, rather than in every retry

	return reconnectingBus<Connections>(
		(core) => {
			const dispatch = (message: string, channel: string) => core.hear(channel.slice(prefix.length), message)
			return {
				kind: 'redis',
				label: 'redis',
				interrupted: 'redis connection closed while subscribing',
				// A handler that throws throws to the publisher (or out of Bun's subscription callback), as it always has here.
				create(s) {
					const c: Connections = { pub: client(), sub: client(), topics: new Set(), pending: [] }
					c.pub.onclose = (e) => s.lost(e)
					c.sub.onclose = (e) => s.lost(e)
					return c
				},
				/** Both connections, every topic subscribed. */
				async start({ conn: c }) {
					await within(Promise.all([c.pub.connect(), c.sub.connect()]), 5_000, 'redis connect')
					await within(c.sub.subscribe([prefix + RESYNC_TOPIC], dispatch), 5_000, 'redis subscribe')
					// Topics registered while an await was pending are caught up here, until none is left.
					for (let todo = [...core.topics()]; todo.length; todo = [...core.topics()].filter((t) => !c.topics.has(t))) {
						for (const t of todo) c.topics.add(t)
						await within(c.sub.subscribe(todo.map((t) => prefix + t), dispatch), 5_000, 'redis subscribe')
					}
				},
				drop({ conn: c }) {
					c.pub.close()
					c.sub.close()
				},
				/** The PUBLISH reply counts the subscriptions reached, this instance's own included: that one is taken off. */
				send: ({ conn: c }, topic, message) => c.pub.publish(prefix + topic, message).then((n) => Math.max(0, Number(n) - (c.topics.has(topic) ? 1 : 0))),
				beat: ({ conn: c }) => Promise.all([c.pub.ping(), c.sub.ping()]),
				ping: ({ conn: c }) => c.pub.ping().then((r) => r === 'PONG'),
				subscribe(s, topic) {
					if (s.conn.topics.has(topic)) return
					s.conn.topics.add(topic)
					s.conn.pending.push(s.conn.sub.subscribe(prefix + topic, dispatch).catch((e) => s.lost(e)))
				},
				settled: ({ conn: c }) => Promise.all(c.pending),
			}
		},
		onError,
		opts,
	)
}
