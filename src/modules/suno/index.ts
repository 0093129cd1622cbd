/**
 * `/suno/*`: the Suno task API (as new-api and one-api relay it: `POST /suno/submit/{music|lyrics}` answers
 * `{code:"success", data:"<task id>"}`; `GET /suno/fetch/{id}` and `POST /suno/fetch {ids}` answer the task(s) with
 * `status`, `progress`, `fail_reason` and the songs in `data`) on channels of type `musicsvc`, path and query
 * unchanged, the client's key replaced by the channel's Bearer key. Submits are charged under suno_music /
 * suno_lyrics when accepted and refunded once if the task fails; fetches show only the caller's tasks. Those are the
 * whole list (passthrough/task-routes.ts): any other path is 404, never forwarded, but the paths a channel's operator
 * added (`settings.extra_task_paths`), passed through unbilled. The gateway's own errors come in new-api's task shape
 * (passthrough/task-errors.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { badRequest, GatewayError, notFound } from '../../core/errors'
import { forwardAny, groupBy, postJson, serviceChannels } from '../../passthrough/forward'
import { requestFee } from '../../passthrough/pricing'
import { jsonResponse, relayPassthrough } from '../../passthrough/relay'
import { channelCredentials, channelUrl, jsonHeaders } from '../../passthrough/upstream'
import { withoutCredentials } from '../../relay/sent-credentials'
import { SunoErrorBody, taskErrors } from '../../passthrough/task-errors'
import { extraPathChannels, noRoute, SUNO_SUBMIT_ACTIONS } from '../../passthrough/task-routes'
import { checkCallbackUrl } from '../../lib/callback-url'
import type { Services } from '../../services'
import { applyUpdate } from '../../tasks/refresh'
import { ownedByUpstream } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { sunoUpdate } from '../../tasks/upstream'
import { serviceAuth } from '../mj/auth'

export const SUNO_MODELS = SUNO_SUBMIT_ACTIONS.map((a) => `suno_${a}` as const)

const SunoAnswer = t.Object({ code: t.String(), message: t.Optional(t.String()), data: t.Optional(t.Unknown()) }, { additionalProperties: true })
const sunoErrors = taskErrors(SunoErrorBody)

/** Task reads (`GET /suno/fetch/{id}`, `POST /suno/fetch`): polls, not counted against rpm_limit. */
export const isSunoPoll = (_method: string, path: string): boolean => path === '/suno/fetch' || path.startsWith('/suno/fetch/')

export const sunoModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Suno'] } })
		.use(serviceAuth(svc, { service: 'suno', models: SUNO_MODELS, isPoll: isSunoPoll }))
		.post(
			'/suno/submit/:action',
			async ({ params, body, token, requestId, startedAt, request }) => {
				// One route with an action parameter (new-api's `/suno/submit/:action`): an action it does not know is a bad
				// request, and the one it knows goes upstream as listed, lowercase.
				const action = SUNO_SUBMIT_ACTIONS.find((a) => a === params.action.toLowerCase())
				if (!action) throw badRequest(`Unknown Suno action "${params.action}": use ${SUNO_SUBMIT_ACTIONS.join(' or ')}`, 'action')
				const model = `suno_${action}` as const
				const search = new URL(request.url).search
				// The Suno API POSTs the task to `notify_hook` from its own network (lib/callback-url.ts).
				await checkCallbackUrl(body.notify_hook, { allow: svc.env.fetchAllow }, 'notify_hook')
				// A continuation (`task_id` + `continue_clip_id`) must be the caller's task, on the channel that made it.
				let pin: ((ch: { id: number }) => boolean) | undefined
				if (typeof body.task_id === 'string' && body.task_id) {
					const [parent] = await ownedByUpstream(svc.db, 'suno', token.accountId, [body.task_id])
					if (!parent) throw notFound(`No Suno task "${body.task_id}"`, 'task_not_found')
					pin = (ch) => ch.id === parent.channelId
				}
				return relayPassthrough(
					taskOp({
						ctx: { svc, token, requestId, startedAt, signal: request.signal },
						kind: 'suno',
						endpoint: `/suno/submit/${action}`,
						model,
						types: ['musicsvc'],
						pin,
						shape: 'suno',
						cost: requestFee,
						request: (ch) => ({ url: channelUrl(ch, `/suno/submit/${action}${search}`), headers: jsonHeaders(ch), body: JSON.stringify(body) }),
						async accept(res, ch) {
							const text = withoutCredentials(await res.text(), channelCredentials(ch))
							const response = new Response(text, { status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? 'application/json', 'x-request-id': requestId } })
							let answer: { code?: unknown; data?: unknown } = {}
							try {
								answer = JSON.parse(text)
							} catch {
								return { response }
							}
							const data = answer.data as { task_id?: unknown } | string | undefined
							const id = typeof data === 'string' ? data : typeof data?.task_id === 'string' ? data.task_id : undefined
							return answer.code === 'success' && id ? { response, upstreamId: id } : { response }
						},
					}),
				)
			},
			{
				params: t.Object({ action: t.String({ minLength: 1, maxLength: 32 }) }),
				body: t.Record(t.String(), t.Unknown()),
				response: { 200: SunoAnswer, ...sunoErrors },
				detail: { summary: 'Submit a Suno job (music or lyrics)', description: 'Charged under suno_<action> when the upstream accepts it.' },
			},
		)
		.get(
			'/suno/fetch/:id',
			async ({ params, token, request, requestId }) => {
				const [task] = await ownedByUpstream(svc.db, 'suno', token.accountId, [params.id])
				if (!task) throw notFound(`No Suno task "${params.id}"`, 'task_not_found')
				const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
				if (!ch) throw new GatewayError('unavailable', 'The channel that ran this task is no longer available', { code: 'channel_unavailable' })
				const answer = await forwardAny([ch], { path: `/suno/fetch/${encodeURIComponent(params.id)}`, method: 'GET', inbound: request.headers, signal: request.signal, requestId }, 'Suno')
				const text = await answer.text()
				if (answer.ok) {
					try {
						const update = sunoUpdate((JSON.parse(text) as { data?: unknown })?.data)
						if (update) await applyUpdate(svc, task, update)
					} catch (e) {
						if (!(e instanceof SyntaxError)) throw e
					}
				}
				return new Response(text, { status: answer.status, headers: answer.headers })
			},
			{ params: t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) }), response: { 200: SunoAnswer, ...sunoErrors }, detail: { summary: 'Fetch one of your Suno tasks' } },
		)
		.post(
			'/suno/fetch',
			async ({ body, token, request, requestId }) => {
				const rows = await ownedByUpstream(svc.db, 'suno', token.accountId, body.ids)
				const data: unknown[] = []
				for (const [channelId, group] of groupBy(rows, (r) => r.channelId)) {
					const ch = channelId === null ? undefined : svc.catalog.channel(channelId)
					if (!ch) continue
					const byId = new Map(group.map((r) => [r.upstreamId, r]))
					const answer = (await postJson(ch, '/suno/fetch', { ...body, ids: [...byId.keys()] }, request.signal).catch(() => undefined)) as { data?: unknown } | undefined
					for (const item of Array.isArray(answer?.data) ? answer.data : []) {
						const task = byId.get((item as { task_id?: unknown })?.task_id as string)
						if (!task) continue // never show a task the caller does not own
						data.push(item)
						const update = sunoUpdate(item)
						if (update) await applyUpdate(svc, task, update)
					}
				}
				return jsonResponse({ code: 'success', message: '', data }, requestId)
			},
			{
				body: t.Object({ ids: t.Array(t.String(), { maxItems: 1000 }), action: t.Optional(t.String()) }, { additionalProperties: true }),
				response: { 200: SunoAnswer, ...sunoErrors },
				detail: { summary: 'Fetch several of your Suno tasks', description: 'Ids that are not yours are left out.' },
			},
		)
		.all(
			'/suno/*',
			async ({ request, requestId }) => {
				const url = new URL(request.url)
				// Only what a channel's operator added: not Suno-API's `GET /suno/account` (its Suno session cookie and JWT),
				// nor another task read (not bound to the caller's tasks), nor whatever a new version adds.
				const channels = extraPathChannels(serviceChannels(svc, 'musicsvc', SUNO_MODELS), request.method, url.pathname)
				if (!channels.length) throw noRoute(url.pathname)
				const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
				return forwardAny(channels, { path: url.pathname + url.search, method: request.method, inbound: request.headers, body, signal: request.signal, requestId }, 'Suno')
			},
			{
				parse: 'none',
				response: sunoErrors,
				detail: { summary: "A channel's extra paths (passed through unbilled)", description: "The paths a channel's `settings.extra_task_paths` names, to such channels; any other path (the service's `/suno/account` among them) is 404, never forwarded." },
			},
		)
