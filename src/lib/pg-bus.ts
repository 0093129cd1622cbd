/**
 * The bus over PostgreSQL LISTEN/NOTIFY, for instances that share a PostgreSQL and no Redis: what one changes (a key
 * revoked, a channel disabled, a lease wanted back) reaches the others at once rather than at their next poll.
 * https://www.postgresql.org/docs/current/sql-notify.html, https://github.com/porsager/postgres#listen--notify
 *
 * Like Redis pub/sub, NOTIFY is fire and forget: a session that is not listening when a transaction commits never
 * gets its notifications. postgres.js's own `sql.listen` listens again after a reconnect, but does not say when its
 * connection dropped, so what was sent meanwhile would be lost without anyone knowing. So the bus owns its connection,
 * as the Redis bus does (lib/bus.ts): a session is one postgres.js client of one connection, named by
 * `application_name` (SESSION_NAME) so it can be found in pg_stat_activity; when it closes (`onclose`, a
 * pg_terminate_backend, a restart) or a heartbeat (a NOTIFY to itself, so a LISTEN that stopped delivering counts as
 * down too) goes unanswered, the session is dropped (`subscribed()` false: the
 * key cache and the catalog poll meanwhile) and a new one is opened with backoff, for as long as it takes. A new
 * session runs every subscriber's `resync`; messages this instance could not send meanwhile go once it is back.
 *
 * One NOTIFY channel carries every topic: `<sender> <topic>\n<message>`. The sender id drops this instance's own
 * echo (it applied its message when publishing). A payload must be shorter than 8000 bytes: a longer message goes as
 * parts (`<sender> <topic> <id> <i> <n>`) in one statement, one transaction, and is put together on arrival.
 * `publishCounted` counts the other instances' sessions in pg_stat_activity, for acked topics (lib/acked-topic.ts).
 * @module
 */
import type postgres from 'postgres'
import type { Bus } from './bus'
import { randomString } from './ids'

/** The NOTIFY channel (per database, as NOTIFY is). */
const CHANNEL = 'switchboard_bus'
/**
 * The bus sessions' application_name begins with this: how instances count each other, and how an operator finds them
 * in pg_stat_activity. Then this process's pid (`switchboard-bus/4242`), to tell which instance a session is.
 */
export const SESSION_NAME = 'switchboard-bus/'
/** Sent when this instance lost messages it could not send during an outage: every instance resyncs. */
const RESYNC_TOPIC = 'bus-resync'
/** The heartbeat's message to itself (others ignore it: no one subscribes to it). */
const PROBE_TOPIC = 'bus-probe'
/** Messages kept while the session is down (identical ones once); beyond, the oldest go and a resync is broadcast. */
const OUTBOX_MAX = 10_000
/** A payload's bytes at most (PostgreSQL: "shorter than 8000 bytes"), leaving room for the header. */
const PART_BYTES = 7_000
/** Messages being put together from parts, at most (a sender that died midway leaves its parts here). */
const PARTIAL_MAX = 1_000

export type PgBusOptions = {
	/** How long `pgBus` waits for the first session before it resolves anyway (it keeps trying). Default 2 s. */
	connectWaitMs?: number
	/** Delay before reconnecting: `minMs` doubled per failed attempt up to `maxMs`, with jitter. Default 100 ms, 5 s. */
	retry?: { minMs: number; maxMs: number }
	/**
	 * How often the session NOTIFYs itself and waits for it, to notice a connection that died without closing or a
	 * LISTEN that no longer delivers. Default 15 s.
	 */
	heartbeatMs?: number
	/** Told when the session is lost or the first one cannot be made (with the error), and when it is back. */
	onState?: (subscribed: boolean, error?: unknown) => void
	/** What follows SESSION_NAME in the session's application_name. Default this process's pid. */
	name?: string
}

type Session = { sql: postgres.Sql; up: boolean; dead: boolean; lost(e: unknown): void }
type Topic = { handlers: Set<(m: string) => void>; resyncs: Set<() => void> }

/**
 * Resolves once listening or after `connectWaitMs`; it never fails for an unreachable database: it then keeps
 * trying and joins once it answers.
 *
 * @example
 * const bus = await pgBus(env.databaseUrl, (e) => log.warn('bus error', { error: String(e) }))
 * bus.subscribe('token-invalidate', forget, () => cache.clear())
 */
export async function pgBus(url: string, onError: (e: unknown) => void, opts: PgBusOptions = {}): Promise<Bus> {
	const { default: connect } = await import('postgres')
	const retry = opts.retry ?? { minMs: 100, maxMs: 5_000 }
	const heartbeatMs = opts.heartbeatMs ?? 15_000
	// An application_name in DATABASE_URL would replace ours, and the instances could not count each other. (A URL
	// the URL parser refuses, such as postgres.js's several hosts `a:5432,b:5432`, goes as it is.)
	let target = url
	try {
		const u = new URL(url)
		u.searchParams.delete('application_name')
		target = u.toString()
	} catch {}
	const me = randomString(12)
	const applicationName = (SESSION_NAME + (opts.name ?? String(process.pid))).slice(0, 63)

	const topics = new Map<string, Topic>()
	const outbox = new Map<string, [topic: string, message: string]>()
	const partial = new Map<string, string[]>()
	let overflowed = false
	let sent = 0
	let cur: Session | undefined
	let opening: Promise<void> | undefined
	let retryTimer: ReturnType<typeof setTimeout> | undefined
	let heartbeat: ReturnType<typeof setInterval> | undefined
	/** The heartbeat's probe on its way: its message, and what it wakes once heard. */
	let probe: { message: string; heard: () => void } | undefined
	let probes = 0
	let attempt = 0
	let announcedDown = false
	let closed = false

	const deliver = (topic: string, message: string) => {
		for (const h of topics.get(topic)?.handlers ?? []) {
			try {
				h(message)
			} catch (e) {
				onError(e)
			}
		}
	}
	function resyncAll() {
		partial.clear()
		for (const t of topics.values())
			for (const r of t.resyncs) {
				try {
					r()
				} catch (e) {
					onError(e)
				}
			}
	}
	function receive(payload: string) {
		const nl = payload.indexOf('\n')
		if (nl < 0) return
		const [sender, topic, id, i, n] = payload.slice(0, nl).split(' ')
		if (sender === me && topic === PROBE_TOPIC && probe?.message === payload.slice(nl + 1)) return probe.heard()
		if (!sender || !topic || sender === me) return
		let message = payload.slice(nl + 1)
		if (id !== undefined) {
			const key = `${sender} ${id}`
			const parts = partial.get(key) ?? []
			if (!partial.has(key)) {
				if (partial.size >= PARTIAL_MAX) partial.delete(partial.keys().next().value!)
				partial.set(key, parts)
			}
			parts[Number(i)] = message
			if (parts.filter((p) => p !== undefined).length < Number(n)) return
			partial.delete(key)
			message = parts.join('')
		}
		if (topic === RESYNC_TOPIC) resyncAll()
		else deliver(topic, message)
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
	/** NOTIFYs the message (in parts if long) and resolves to how many other instances' sessions listen; 0 when it failed. */
	function send(s: Session, topic: string, message: string): Promise<number> {
		const payloads = encode(me, topic, message, () => String(++sent))
		const others = 'SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, $1) AND pid <> pg_backend_pid()'
		const text = `SELECT (${others})::int AS n, ${payloads.map((_, i) => `pg_notify($2, $${i + 3})`).join(', ')}`
		return s.sql.unsafe<{ n: number }[]>(text, [SESSION_NAME, CHANNEL, ...payloads]).then(
			(rows) => Number(rows[0]?.n ?? 0),
			(e) => {
				// Kept for the next session; a lost connection is reported once, by the session.
				if (topic === RESYNC_TOPIC) overflowed = true
				else queue(topic, message)
				if (!s.dead) onError(e)
				return 0
			},
		)
	}
	function flushOutbox(s: Session) {
		if (overflowed) {
			overflowed = false
			void send(s, RESYNC_TOPIC, '')
		}
		const items = [...outbox.values()]
		outbox.clear()
		for (const [topic, message] of items) void send(s, topic, message)
	}

	/** Opens a session and LISTENs. Throws (and drops it) when that fails. */
	async function open(): Promise<void> {
		// `onnotify` is an option of postgres.js (what its own `listen` uses), missing from its types.
		const options: postgres.Options<{}> & { onnotify: (channel: string, payload: string) => void } = {
			max: 1,
			// Held for good: an idle or aged-out connection closed by the client would be an outage of its own.
			idle_timeout: 0,
			max_lifetime: null,
			connect_timeout: 5,
			fetch_types: false,
			onnotice: () => {},
			onnotify: (_channel, payload) => {
				if (cur === s && s.up) receive(payload)
			},
			onclose: () => s.lost(new Error('bus connection closed')),
			connection: { application_name: applicationName },
		}
		const s: Session = {
			sql: connect(target, options),
			up: false,
			dead: false,
			lost(e) {
				if (s.dead) return
				s.dead = true
				// Not reconnected by postgres.js on its next query: this session is over, the next is a new client.
				void s.sql.end({ timeout: 0 }).catch(() => {})
				if (cur === s) cur = undefined
				if (s.up) down(e)
			},
		}
		cur = s
		try {
			await within(s.sql.unsafe(`LISTEN ${CHANNEL}`), 5_000, 'listen')
			if (s.dead || closed) throw new Error('bus connection closed while listening')
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
		// Listening from here on; anything sent before may have been missed (NOTIFY keeps nothing for us).
		resyncAll()
		flushOutbox(s)
		clearInterval(heartbeat)
		heartbeat = setInterval(() => {
			const message = String(++probes)
			const heard = new Promise<void>((resolve) => (probe = { message, heard: resolve }))
			const sent = s.sql.unsafe('SELECT pg_notify($1, $2)', [CHANNEL, `${me} ${PROBE_TOPIC}\n${message}`])
			within(Promise.all([sent, heard]), Math.min(5_000, heartbeatMs), 'heartbeat').catch((e) => s.lost(e))
		}, heartbeatMs)
		heartbeat.unref?.()
	}

	function down(e: unknown) {
		clearInterval(heartbeat)
		partial.clear()
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
		kind: 'postgres',
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
			return send(s, topic, message)
		},
		subscribe(topic, handler, resync) {
			// One channel for every topic: nothing to LISTEN to per topic.
			const t = topics.get(topic) ?? { handlers: new Set(), resyncs: new Set() }
			t.handlers.add(handler)
			if (resync) t.resyncs.add(resync)
			topics.set(topic, t)
		},
		async ready() {
			if (opening) await opening
		},
		async close() {
			closed = true
			clearTimeout(retryTimer)
			clearInterval(heartbeat)
			const s = cur
			s?.lost(new Error('bus closed'))
			await s?.sql.end({ timeout: 1 }).catch(() => {})
		},
		async ping() {
			const s = cur
			if (!s?.up) return false
			try {
				await within(s.sql.unsafe('SELECT 1'), 2_000, 'ping')
				return true
			} catch {
				return false
			}
		},
		subscribed: () => !!cur?.up,
	}
}

/**
 * The payloads of one message: one when it fits, else parts of at most PART_BYTES each (cut between characters).
 * @example encode('me', 'catalog-changed', '', nextId) // ['me catalog-changed\n']
 */
export function encode(sender: string, topic: string, message: string, nextId: () => string): string[] {
	if (Buffer.byteLength(message) <= PART_BYTES) return [`${sender} ${topic}\n${message}`]
	const parts: string[] = []
	let start = 0
	let bytes = 0
	for (let i = 0; i < message.length; ) {
		const cp = message.codePointAt(i)!
		const width = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4
		const len = cp >= 0x10000 ? 2 : 1
		if (bytes + width > PART_BYTES) {
			parts.push(message.slice(start, i))
			start = i
			bytes = 0
		}
		bytes += width
		i += len
	}
	parts.push(message.slice(start))
	const id = nextId()
	return parts.map((p, i) => `${sender} ${topic} ${id} ${i} ${parts.length}\n${p}`)
}

/** `p`, or a rejection once `ms` have passed (a connection that stopped answering never settles by itself). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined
	const late = new Promise<never>((_, no) => {
		timer = setTimeout(() => no(new Error(`bus ${what} timed out after ${ms} ms`)), ms)
	})
	return Promise.race([p, late]).finally(() => clearTimeout(timer))
}
