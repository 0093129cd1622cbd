/** GET /metrics: Prometheus text format. Protected by `METRICS_TOKEN` (bearer) when that is set. */
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { safeEqual } from '../../lib/secrets'
import type { Services } from '../../services'

export const metricsModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Health'] } }).get(
		'/metrics',
		({ request }) => {
			const want = svc.env.metricsToken
			if (want) {
				const auth = request.headers.get('authorization') ?? ''
				if (!safeEqual(auth, `Bearer ${want}`)) throw new GatewayError('authentication', 'metrics need Authorization: Bearer $METRICS_TOKEN', { code: 'invalid_metrics_token' })
			}
			return new Response(svc.metrics.registry.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } })
		},
		{ response: { 200: t.String({ description: 'Prometheus text exposition format' }) }, detail: { summary: 'Prometheus metrics' } },
	)
