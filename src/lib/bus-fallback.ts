/**
 * The Redis bus with PostgreSQL LISTEN/NOTIFY behind it, for instances that share a PostgreSQL and a Redis. Messages go
 * through Redis; one this instance cannot hand to Redis (its connection down, at start or cut later, a PUBLISH that
 * fails or takes longer than PRIMARY_SEND_MS) goes through NOTIFY instead, which every instance also listens to. A
 * change made through an instance that cannot reach Redis then still holds on every other instance once its
 * management call has answered, as the README promises, rather than after their key cache's minute or catalog's 30 s.
 *
 * Normal operation costs Redis only: nothing is NOTIFYed while Redis takes the messages; what the fallback costs is one
 * more connection per instance (the LISTEN session) and its heartbeat every 15 s. Invalidations are idempotent, so a
 * message that reaches an instance twice (a PUBLISH that was slow rather than lost) is harmless.
 *
 * The instance that fell back cannot hear Redis either, so the answers acked topics wait for (lib/acked-topic.ts)
 * would never reach it: an instance that heard another through NOTIFY sends everything through both for PEER_WINDOW_MS,
 * the copies on a topic of their own (COPY) so that they do not make their hearers do the same in turn. What the
 * others publish on their own, when no one fell back to them lately, reaches such an instance only through Redis: it
 * stays `subscribed() === false` and polls (5 s), as the README says of an instance whose bus is down.
 *
 * `subscribed` is Redis's alone. The LISTEN session is a way out, reconnected as the PostgreSQL bus always is (and
 * resyncing the subscribers when it was down: a fallen-back change may have been missed), but an instance whose own
 * session is down, or never listens (a transaction-pooling PgBouncer, where LISTEN is not kept), does not poll for it:
 * it misses only what an instance that could not reach Redis sent meanwhile, as every instance did before the fallback.
 * @module
 */
import type { Bus } from './bus'
import { deliverTo, type Topic, within } from './bus-core'

/** How long Redis may take to accept a PUBLISH before the message goes through PostgreSQL instead. */
const PRIMARY_SEND_MS = 500
/** The longest a NOTIFY may take (a database that stopped answering): the publisher of an acked topic waits for it. */
const FALLBACK_SEND_MS = 5_000
/** For how long after hearing an instance that fell back to NOTIFY this one also NOTIFYs what it publishes. */
const PEER_WINDOW_MS = 30_000
/** Before a topic on NOTIFY: a copy of a message also sent through Redis (it does not open its hearers' window). */
const COPY = 'copy:'


/**
 * `primary` (Redis) falling back on `fallback` (PostgreSQL), both already made; `kind`, `ping` and `subscribed` are
 * the primary's.
 * @example const bus = fallbackBus(await redisBus(url, warn), await pgBus(databaseUrl, warn), warn)
 */
export function fallbackBus(primary: Bus, fallback: Bus, onError: (e: unknown) => void): Bus {
	const sendPrimary = primary.sendOthers?.bind(primary)
	const sendFallback = fallback.sendOthers?.bind(fallback)
	if (!sendPrimary || !sendFallback) throw new Error('fallbackBus: both buses must be shared ones')
	const topics = new Map<string, Topic>()
	/** Until when an instance that fell back to NOTIFY may be waiting for this one's answers. */
	let peersUntil = 0

	function deliver(topic: string, message: string) {
		deliverTo(topics.get(topic), message, onError)
	}
	function resync(topic: string) {
		for (const r of topics.get(topic)?.resyncs ?? []) {
			try {
				r()
			} catch (e) {
				onError(e)
			}
		}
	}

	/** Resolves to how many other instances the message reached (the primary's count when it took it), 0 when none could send it. */
	async function send(topic: string, message: string): Promise<number> {
		// Both started before any await, so messages published one after another leave in that order.
		if (Date.now() < peersUntil && primary.subscribed()) void sendFallback!(COPY + topic, message, false)
		if (primary.subscribed()) {
			const n = await within(sendPrimary!(topic, message, false), PRIMARY_SEND_MS, 'redis publish').catch((e) => {
				onError(e)
				return undefined
			})
			if (n !== undefined) return n
		}
		// Redis down, or it did not take the message (its subscription then likely broken too, so sent as a fallback
		// rather than a copy: the others answer through NOTIFY). NOTIFY reaches every instance listening on this database.
		const n = await within(sendFallback!(topic, message, false), FALLBACK_SEND_MS, 'bus notify').catch((e) => {
			onError(e)
			return undefined
		})
		if (n !== undefined) return n
		// Neither: kept by both, sent by whichever is back first (the other one's copy is then a harmless duplicate).
		onError(new Error(`could not tell the other instances (${topic}) through Redis or PostgreSQL: sent once either is back`))
		void sendPrimary!(topic, message, true)
		void sendFallback!(topic, message, true)
		return 0
	}

	return {
		kind: primary.kind,
		publish(topic, message) {
			deliver(topic, message) // this instance at once, whatever the buses do
			void send(topic, message)
		},
		publishCounted(topic, message) {
			deliver(topic, message)
			return send(topic, message)
		},
		subscribe(topic, handler, onResync) {
			let t = topics.get(topic)
			if (!t) {
				t = { handlers: new Set(), resyncs: new Set() }
				topics.set(topic, t)
				// A resync from either (it was not subscribed a while): what was published meanwhile may have been missed.
				primary.subscribe(topic, (m) => deliver(topic, m), () => resync(topic))
				fallback.subscribe(
					topic,
					(m) => {
						// From an instance that fell back (or has no Redis): it waits for answers it can hear only here.
						peersUntil = Date.now() + PEER_WINDOW_MS
						deliver(topic, m)
					},
					() => resync(topic),
				)
				fallback.subscribe(COPY + topic, (m) => deliver(topic, m))
			}
			t.handlers.add(handler)
			if (onResync) t.resyncs.add(onResync)
		},
		// Redis's: a LISTEN session still being opened resyncs the subscribers once it listens, and one that never
		// will (a transaction-pooling PgBouncer) must not hold up the start.
		ready: () => primary.ready(),
		async close() {
			await Promise.all([primary.close(), fallback.close()])
		},
		ping: () => primary.ping(),
		// Redis's: the others' changes come through it. Not the LISTEN session's too: behind a transaction-pooling
		// PgBouncer it never listens, and an instance with Redis must not poll for good for want of it there.
		subscribed: () => primary.subscribed(),
	}
}
