/**
 * `/mj/*`: midjourney-proxy passthrough on channels of type `imgsvc` (github.com/novicezk/midjourney-proxy). The routes
 * of its allow list (passthrough/task-routes.ts) go to the channel's base_url with path and query unchanged
 * (`/mj/submit/imagine` → `{base_url}/mj/submit/imagine`), the client's key replaced by the channel's `mj-api-secret`;
 * any other path is 404, never forwarded. Every call that creates a task is billed: submits (`/mj/submit/*` but the
 * upload) and midjourney-proxy-plus's InsightFace face swap (`/mj/insight-face/swap`). They are charged from the price
 * list under their action name when the proxy accepts (code 1 or 22), refunded once if the task fails. Task ids are
 * recorded to the account, so fetches and lists show only the caller's tasks, and a follow-up (upscale, variation,
 * action…) must name one of the caller's tasks and goes to the channel that made it. The upload and the paths a
 * channel's operator added (`settings.extra_task_paths`) pass through unbilled. The gateway's own errors come in
 * midjourney-proxy's shape (passthrough/task-errors.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { Integer } from '../../protocols/json-types'
import { notFound } from '../../core/errors'
import { checkCallbackUrl } from '../../lib/callback-url'
import { forwardAny, serviceChannels } from '../../passthrough/forward'
import { requestFee } from '../../passthrough/pricing'
import { type CallContext, relayPassthrough } from '../../passthrough/relay'
import { MjErrorBody, taskErrors } from '../../passthrough/task-errors'
import { extraPathChannels, MJ_INSIGHT_FACE_OPS, MJ_SUBMIT_ACTIONS, noRoute } from '../../passthrough/task-routes'
import { channelCredentials, channelUrl, jsonHeaders } from '../../passthrough/upstream'
import { withoutCredentials } from '../../relay/sent-credentials'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { findByUpstream, ownedByUpstream } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { MJ_ACCEPTED, MJ_EXISTED, MJ_MODELS, type MjModel, mjActionModel, mjInsightFaceModel, mjParentId } from './actions'
import { serviceAuth } from './auth'
import { fetchOwnedTask, listOwned, listRecent } from './tasks'

const MjSubmitResponse = t.Object(
	{ code: Integer({ description: '1 submitted, 21 exists, 22 queued, other: refused' }), description: t.String(), result: t.Optional(t.Unknown()), properties: t.Optional(t.Unknown()) },
	{ additionalProperties: true },
)
/** What the proxies answer a task op (image seed, cancel): a code, its words, and the result (the seed). */
const MjOpResponse = t.Object({ code: Integer({ description: '1 done, other: refused' }), description: t.Optional(t.String()), result: t.Optional(t.Unknown()) }, { additionalProperties: true })
const MjTask = t.Object({ id: t.String(), status: t.String(), progress: t.Optional(t.String()), imageUrl: t.Optional(t.Nullable(t.String())) }, { additionalProperties: true })
const mjErrors = taskErrors(MjErrorBody)

/** The proxy's answer as it came, but for the channel's credentials, which a refusal may repeat. */
const textResponse = (text: string, res: Response, ch: Channel, requestId: string) =>
	new Response(withoutCredentials(text, channelCredentials(ch)), { status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? 'application/json', 'x-request-id': requestId } })

/** Task reads (fetch, list, queue, list-by-condition, image-seed): polls, not counted against rpm_limit. */
export const isMjPoll = (_method: string, path: string): boolean => path.startsWith('/mj/task/')

/**
 * Submits a task-creating call (`path` with its query) under `model`: charged when the proxy accepts it, the task
 * recorded to the account. A follow-up (`parentId`) must act on one of the caller's tasks, on the channel that made it.
 */
async function submitTask(ctx: CallContext, path: string, model: MjModel, body: Record<string, unknown>, parentId: string | undefined): Promise<Response> {
	const { svc, token, requestId } = ctx
	let pin: ((ch: { id: number }) => boolean) | undefined
	if (parentId) {
		const [parent] = await ownedByUpstream(svc.db, 'mj', token.accountId, [parentId])
		if (!parent) throw notFound(`No Midjourney task "${parentId}"`, 'task_not_found')
		pin = (ch) => ch.id === parent.channelId
	}
	return relayPassthrough(
		taskOp({
			ctx,
			kind: 'mj',
			endpoint: path.split('?')[0]!,
			model,
			types: ['imgsvc'],
			pin,
			shape: 'midjourney',
			cost: requestFee,
			request: (ch) => ({ url: channelUrl(ch, path), headers: jsonHeaders(ch), body: JSON.stringify(body) }),
			async accept(res, ch) {
				const text = await res.text()
				let answer: { code?: unknown; result?: unknown } = {}
				try {
					answer = JSON.parse(text)
				} catch {
					// not JSON: a refusal, passed back as it is
				}
				const response = textResponse(text, res, ch, requestId)
				const id = typeof answer.result === 'string' || typeof answer.result === 'number' ? String(answer.result) : undefined
				const code = Number(answer.code)
				if (!id || (!MJ_ACCEPTED.has(code) && code !== MJ_EXISTED)) return { response }
				// A task this channel already has is no new job, whatever the code: 21 for a follow-up made before, or 1 for
				// `/mj/submit/modal`, which submits the very task that waited for its window (charged when it was made).
				const existing = (await findByUpstream(svc.db, 'mj', ch.id, id)) !== undefined
				return { response, upstreamId: id, existing }
			},
		}),
	)
}

export const mjModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Midjourney'] } })
		.use(serviceAuth(svc, { service: 'midjourney', models: MJ_MODELS, isPoll: isMjPoll }))
		.post(
			'/mj/submit/:action',
			async ({ params, body, token, requestId, startedAt, request }) => {
				const url = new URL(request.url)
				const action = params.action
				if (!MJ_SUBMIT_ACTIONS.has(action)) throw noRoute(url.pathname)
				const path = `/mj/submit/${action}${url.search}`
				// midjourney-proxy POSTs the task to `notifyHook` from its own network (lib/callback-url.ts).
				await checkCallbackUrl(body.notifyHook, { allow: svc.env.fetchAllow }, 'notifyHook')
				const model = mjActionModel(action, body)
				if (!model)
					return forwardAny(serviceChannels(svc, 'imgsvc', MJ_MODELS), { path, method: 'POST', inbound: request.headers, body: JSON.stringify(body), signal: request.signal, requestId }, 'Midjourney')
				return submitTask({ svc, token, requestId, startedAt, signal: request.signal }, path, model, body, mjParentId(action, body))
			},
			{
				params: t.Object({ action: t.String({ minLength: 1, maxLength: 64 }) }),
				body: t.Record(t.String(), t.Unknown()),
				response: { 200: MjSubmitResponse, ...mjErrors },
				detail: {
					summary: 'Submit a Midjourney job',
					description: `One of ${[...MJ_SUBMIT_ACTIONS].join(', ')} (any other action is 404, never forwarded). Charged under mj_<action> when accepted (upload-discord-images is not a job: unbilled).`,
				},
			},
		)
		.post(
			'/mj/insight-face/:op',
			async ({ params, body, token, requestId, startedAt, request }) => {
				const url = new URL(request.url)
				if (!MJ_INSIGHT_FACE_OPS.has(params.op)) throw noRoute(url.pathname)
				await checkCallbackUrl(body.notifyHook, { allow: svc.env.fetchAllow }, 'notifyHook')
				return submitTask({ svc, token, requestId, startedAt, signal: request.signal }, `/mj/insight-face/${params.op}${url.search}`, mjInsightFaceModel(params.op), body, undefined)
			},
			{
				params: t.Object({ op: t.String({ minLength: 1, maxLength: 64 }) }),
				body: t.Record(t.String(), t.Unknown()),
				response: { 200: MjSubmitResponse, ...mjErrors },
				detail: { summary: 'Submit an InsightFace face swap (midjourney-proxy-plus)', description: '`swap` with {sourceBase64, targetBase64}: a SWAP_FACE task, charged under mj_swap_face when accepted and fetched like any other task. Any other op is 404.' },
			},
		)
		.get('/mj/task/:id/fetch', ({ params, token, request, requestId }) => fetchOwnedTask(svc, token.accountId, params.id, `/mj/task/${encodeURIComponent(params.id)}/fetch`, request, requestId), {
			params: t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) }),
			response: { 200: MjTask, ...mjErrors },
			detail: { summary: 'Fetch one of your Midjourney tasks' },
		})
		// The ops of one of the caller's own tasks its proxy documents, forwarded on the channel that made it.
		.get('/mj/task/:id/image-seed', ({ params, token, request, requestId }) => fetchOwnedTask(svc, token.accountId, params.id, taskOpPath(params.id, 'image-seed', request), request, requestId, false), {
			params: t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) }),
			response: { 200: MjOpResponse, ...mjErrors },
			detail: { summary: "One of your Midjourney tasks' image seed (midjourney-proxy-plus, trueai-org)", description: "The proxy's answer as it gives it (`{code, description, result}`, the seed in `result`)." },
		})
		.post('/mj/task/:id/cancel', ({ params, token, request, requestId }) => fetchOwnedTask(svc, token.accountId, params.id, taskOpPath(params.id, 'cancel', request), request, requestId, false), {
			params: t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) }),
			parse: 'none',
			response: { 200: MjOpResponse, ...mjErrors },
			detail: { summary: 'Cancel one of your Midjourney tasks (trueai-org/midjourney-proxy)', description: "The proxy's answer as it gives it." },
		})
		.post('/mj/task/list-by-condition', async ({ body, token, request, requestId }) => listOwned(svc, token.accountId, body.ids ?? [], request.signal, requestId), {
			body: t.Object({ ids: t.Optional(t.Array(t.String(), { maxItems: 1000 })) }, { additionalProperties: true }),
			response: { 200: t.Array(MjTask), ...mjErrors },
			detail: { summary: 'Fetch several of your Midjourney tasks', description: 'Ids that are not yours are left out.' },
		})
		// trueai-org/midjourney-proxy's name for list-by-condition (its TaskController declares both).
		.post('/mj/task/list-by-ids', async ({ body, token, request, requestId }) => listOwned(svc, token.accountId, body.ids ?? [], request.signal, requestId), {
			body: t.Object({ ids: t.Optional(t.Array(t.String(), { maxItems: 1000 })) }, { additionalProperties: true }),
			response: { 200: t.Array(MjTask), ...mjErrors },
			detail: { summary: 'Fetch several of your Midjourney tasks (list-by-condition under another name)', description: 'Ids that are not yours are left out.' },
		})
		.get('/mj/task/list', ({ token, request, requestId }) => listRecent(svc, token.accountId, false, request.signal, requestId), {
			response: { 200: t.Array(MjTask), ...mjErrors },
			detail: { summary: 'Your latest Midjourney tasks (up to 100)' },
		})
		.get('/mj/task/queue', ({ token, request, requestId }) => listRecent(svc, token.accountId, true, request.signal, requestId), {
			response: { 200: t.Array(MjTask), ...mjErrors },
			detail: { summary: 'Your Midjourney tasks still running' },
		})
		.all(
			'/mj/*',
			async ({ request, token, requestId }) => {
				const url = new URL(request.url)
				// Nothing else but what a channel's operator added: the proxy's accounts and administration (novicezk's
				// `/mj/account/*` answers each Discord account's userToken; trueai-org's `/mj/admin/*` users, every task, logs,
				// restart) and whatever a new version adds are the operator's, not a key holder's.
				const channels = extraPathChannels(serviceChannels(svc, 'imgsvc', MJ_MODELS), request.method, url.pathname)
				if (!channels.length) throw noRoute(url.pathname)
				const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
				return forwardAny(channels, { path: url.pathname + url.search, method: request.method, inbound: request.headers, body, signal: request.signal, requestId }, 'Midjourney')
			},
			{
				parse: 'none',
				response: mjErrors,
				detail: {
					summary: "A channel's extra paths",
					description:
						"The paths a channel's `settings.extra_task_paths` names, passed through unbilled to such channels. Any other path (the proxy's `/mj/account` and `/mj/admin` APIs among them) is 404, never forwarded.",
				},
			},
		)

/** The path of a task op upstream: the id as the caller wrote it (one segment), the query as sent. */
const taskOpPath = (id: string, op: string, request: Request) => `/mj/task/${encodeURIComponent(id)}/${op}${new URL(request.url).search}`
