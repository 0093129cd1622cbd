/**
 * GET /health (readiness): 200 once migrations ran and the app is ready, 503 while the database does not answer;
 * GET /health/live (liveness): 200 while the process answers at all. /health reports the database kind, whether
 * Redis answers, and which bus this instance hears the others through and whether it is subscribed. A shared bus
 * being down (Redis, or the PostgreSQL LISTEN session) does not make it 503 (the instance still serves, polling for
 * what others change), but `status` says `degraded`: revocations and catalog changes made on other instances reach it
 * only by polling until it is subscribed again (src/lib/bus.ts, src/lib/pg-bus.ts).
 */
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'

const Health = t.Object({
	status: t.String({ description: 'ok | degraded (database down: 503; a shared bus (Redis or PostgreSQL) not subscribed, or Redis not answering a ping within 0.5 s: 200)' }),
	database: t.Object({ kind: t.String(), ok: t.Boolean() }),
	redis: t.Object({
		configured: t.Boolean(),
		reachable: t.Boolean(),
		subscribed: t.Boolean({ description: 'messages from other instances reach this one (false while reconnecting)' }),
	}),
	bus: t.Object({
		kind: t.String({ description: 'redis (REDIS_URL) | postgres (LISTEN/NOTIFY, PostgreSQL without Redis) | memory (PGlite: one process)' }),
		subscribed: t.Boolean({ description: 'changes made on other instances reach this one at once (false while reconnecting; always true for memory)' }),
	}),
	uptime_s: t.Number(),
})

const Live = t.Object({ status: t.Literal('ok'), uptime_s: t.Number() })

export const healthModule = (svc: Services) => {
	const uptime = () => Math.round((Date.now() - svc.startedAt) / 1000)
	return new Elysia({ detail: { tags: ['Health'] } })
		// Liveness: the process answers, whatever its database does. An orchestrator that restarts on /health's 503 would
		// restart every instance at once when the database blips, and a restart does not bring a database back.
		.get('/health/live', () => ({ status: 'ok' as const, uptime_s: uptime() }), {
			response: { 200: Live },
			detail: { summary: 'Liveness: the process answers (the database is not asked)' },
		})
		.get(
		'/health',
		async ({ status }) => {
			let dbOk = true
			try {
				await svc.db.sql.query('SELECT 1')
			} catch {
				dbOk = false
			}
			const shared = svc.bus.kind === 'redis'
			const redis = svc.env.redisUrl
				? { configured: true, reachable: shared && (await svc.bus.ping()), subscribed: shared && svc.bus.subscribed() }
				: { configured: false, reachable: false, subscribed: false }
			const bus = { kind: svc.bus.kind, subscribed: svc.bus.subscribed() }
			// Redis stalled (a partition) still looks subscribed until the bus's heartbeat notices: its ping says it first.
			const degraded = !dbOk || (redis.configured && (!redis.subscribed || !redis.reachable)) || !bus.subscribed
			const body = { status: degraded ? 'degraded' : 'ok', database: { kind: svc.db.kind, ok: dbOk }, redis, bus, uptime_s: uptime() }
			return dbOk ? body : status(503, body)
		},
		{ response: { 200: Health, 503: Health }, detail: { summary: 'Readiness' } },
	)
}
