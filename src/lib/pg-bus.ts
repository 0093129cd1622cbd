/**
 * The bus over PostgreSQL LISTEN/NOTIFY, for instances that share a PostgreSQL and no Redis: what one changes (a key
 * revoked, a channel disabled, a lease wanted back) reaches the others at once rather than at their next poll. With
 * Redis, what an instance cannot hand to Redis goes this way (lib/bus-fallback.ts).
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
 * The reconnecting core (topics, outbox, session lifecycle) is the Redis bus's too (lib/bus-core.ts).
 * @module
 */
import type postgres from 'postgres'
import type { Bus } from './bus'
import { type ReconnectingBusOptions, reconnectingBus, RESYNC_TOPIC, within } from './bus-core'
import { randomString } from './ids'

/** The NOTIFY channel (per database, as NOTIFY is). */
const CHANNEL = 'switchboard_bus'
/**
 * The bus sessions' application_name begins with this: how instances count each other, and how an operator finds them
 * in pg_stat_activity. Then this process's pid (`switchboard-bus/4242`), to tell which instance a session is.
 */
export const SESSION_NAME = 'switchboard-bus/'
/** The heartbeat's message to itself (others ignore it: no one subscribes to it). */
const PROBE_TOPIC = 'bus-probe'
/** A payload's bytes at most (PostgreSQL: "shorter than 8000 bytes"), leaving room for the header. */
const PART_BYTES = 7_000
/** Messages being put together from parts, at most (a sender that died midway leaves its parts here). */
const PARTIAL_MAX = 1_000

export type PgBusOptions = ReconnectingBusOptions & {
	/** What follows SESSION_NAME in the session's application_name. Default this process's pid. */
	name?: string
}

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

	const partial = new Map<string, string[]>()
	let sent = 0
	/** The heartbeat's probe on its way: its message, and what it wakes once heard. */
	let probe: { message: string; heard: () => void } | undefined
	let probes = 0

	return reconnectingBus<postgres.Sql>(
		(core) => {
			/** A notification on the session's connection; while it is being opened (`up` false), only its probe counts. */
			function receive(payload: string, up: boolean) {
				const nl = payload.indexOf('\n')
				if (nl < 0) return
				const [sender, topic, id, i, n] = payload.slice(0, nl).split(' ')
				if (sender === me && topic === PROBE_TOPIC && probe?.message === payload.slice(nl + 1)) return probe.heard()
				if (!up || !sender || !topic || sender === me) return
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
				core.hear(topic, message)
			}
			/** NOTIFYs a probe to itself and resolves once it is heard back (the core times it out). */
			function beat(sql: postgres.Sql) {
				const message = String(++probes)
				const heard = new Promise<void>((resolve) => (probe = { message, heard: resolve }))
				const sent = sql.unsafe('SELECT pg_notify($1, $2)', [CHANNEL, `${me} ${PROBE_TOPIC}\n${message}`])
				return Promise.all([sent, heard])
			}
			return {
				kind: 'postgres',
				label: 'bus',
				interrupted: 'bus connection closed while listening',
				create(s) {
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
							if (core.current() === s) receive(payload, s.up)
						},
						onclose: () => s.lost(new Error('bus connection closed')),
						connection: { application_name: applicationName },
					}
					return connect(target, options)
				},
				// One channel for every topic: LISTEN once, nothing to LISTEN to per topic. Listening only once a probe came
				// back: through a transaction-pooling PgBouncer LISTEN succeeds but nothing is delivered, and a session
				// that counted as up until its first heartbeat would resync every subscriber (and log) each time round.
				start: async ({ conn: sql }) => {
					await within(sql.unsafe(`LISTEN ${CHANNEL}`), 5_000, 'bus listen')
					await within(beat(sql), 5_000, 'bus listen probe')
				},
				// Not reconnected by postgres.js on its next query: this session is over, the next is a new client.
				drop: ({ conn: sql }) => void sql.end({ timeout: 0 }).catch(() => {}),
				/** NOTIFYs the message (in parts if long) and resolves to how many other instances' sessions listen. */
				send({ conn: sql }, topic, message) {
					const payloads = encode(me, topic, message, () => String(++sent))
					const others = 'SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, $1) AND pid <> pg_backend_pid()'
					const text = `SELECT (${others})::int AS n, ${payloads.map((_, i) => `pg_notify($2, $${i + 3})`).join(', ')}`
					return sql.unsafe<{ n: number }[]>(text, [SESSION_NAME, CHANNEL, ...payloads]).then((rows) => Number(rows[0]?.n ?? 0))
				},
				beat: ({ conn: sql }) => beat(sql),
				ping: ({ conn: sql }) => sql.unsafe('SELECT 1').then(() => true),
				forget: () => partial.clear(),
				end: ({ conn: sql }) => sql.end({ timeout: 1 }).catch(() => {}),
			}
		},
		onError,
		opts,
	)
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
