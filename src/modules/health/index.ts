/** GET /health: 200 once migrations ran and the app is ready; reports the database kind and Redis reachability. */
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'

export const healthModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Health'] } }).get(
		'/health',
		async ({ status }) => {
			let dbOk = true
			try {
				await svc.db.sql.query('SELECT 1')
			} catch {
				dbOk = false
			}
			const redis = svc.env.redisUrl ? { configured: true, reachable: svc.bus.kind === 'redis' && (await svc.bus.ping()) } : { configured: false, reachable: false }
			const body = { status: dbOk ? 'ok' : 'degraded', database: { kind: svc.db.kind, ok: dbOk }, redis, uptime_s: Math.round((Date.now() - svc.startedAt) / 1000) }
			return dbOk ? body : status(503, body)
		},
		{
			response: {
				200: t.Object({
					status: t.String(),
					database: t.Object({ kind: t.String(), ok: t.Boolean() }),
					redis: t.Object({ configured: t.Boolean(), reachable: t.Boolean() }),
					uptime_s: t.Number(),
				}),
				503: t.Object({ status: t.String(), database: t.Object({ kind: t.String(), ok: t.Boolean() }), redis: t.Object({ configured: t.Boolean(), reachable: t.Boolean() }), uptime_s: t.Number() }),
			},
			detail: { summary: 'Readiness' },
		},
	)
