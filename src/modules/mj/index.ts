/**
 * `/mj/*`: midjourney-proxy passthrough on channels of type `imgsvc` (github.com/novicezk/midjourney-proxy). The path
 * and query go to the channel's base_url unchanged (`/mj/submit/imagine` → `{base_url}/mj/submit/imagine`), the
 * client's key replaced by the channel's `mj-api-secret`. Every call that creates a task is billed: submits
 * (`/mj/submit/*` but the upload) and midjourney-proxy-plus's InsightFace face swap (`/mj/insight-face/swap`). They are
 * charged from the price list under their action name when the proxy accepts (code 1 or 22), refunded once if the
 * task fails. Task ids are recorded to the account, so fetches and lists show only the caller's tasks, and a
 * follow-up (upscale, variation, action…) must name one of the caller's tasks and goes to the channel that made it.
 * Other sub-paths (uploads, the proxy's own routes) pass through unbilled. The gateway's own errors come in
 * midjourney-proxy's shape (passthrough/task-errors.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { Integer } from '../../protocols/json-types'
import { GatewayError, notFound } from '../../core/errors'
import { checkCallbackUrl } from '../../lib/callback-url'
import { checkPlainPath, forwardAny, serviceChannels } from '../../passthrough/forward'
import { requestFee } from '../../passthrough/pricing'
import { type CallContext, relayPassthrough } from '../../passthrough/relay'
import { MjErrorBody, taskErrors } from '../../passthrough/task-errors'
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
				checkPlainPath(url.pathname) // an encoded `/` in the action would reach another route upstream
				const action = params.action
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
				detail: { summary: 'Submit a Midjourney job', description: 'imagine, blend, describe, change, simple-change, action, modal, shorten, video … Charged under mj_<action> when accepted (upload-discord-images is not a job: unbilled).' },
			},
		)
		.post(
			'/mj/insight-face/:op',
			async ({ params, body, token, requestId, startedAt, request }) => {
				const url = new URL(request.url)
				checkPlainPath(url.pathname)
				await checkCallbackUrl(body.notifyHook, { allow: svc.env.fetchAllow }, 'notifyHook')
				return submitTask({ svc, token, requestId, startedAt, signal: request.signal }, `/mj/insight-face/${params.op}${url.search}`, mjInsightFaceModel(params.op), body, undefined)
			},
			{
				params: t.Object({ op: t.String({ minLength: 1, maxLength: 64 }) }),
				body: t.Record(t.String(), t.Unknown()),
				response: { 200: MjSubmitResponse, ...mjErrors },
				detail: { summary: 'Submit an InsightFace face swap (midjourney-proxy-plus)', description: '`swap` with {sourceBase64, targetBase64}: a SWAP_FACE task, charged under mj_swap_face when accepted and fetched like any other task.' },
			},
		)
		.get('/mj/task/:id/fetch', ({ params, token, request, requestId }) => fetchOwnedTask(svc, token.accountId, params.id, `/mj/task/${encodeURIComponent(params.id)}/fetch`, request, requestId), {
			params: t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) }),
			response: { 200: MjTask, ...mjErrors },
			detail: { summary: 'Fetch one of your Midjourney tasks' },
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
				checkPlainPath(url.pathname)
				// Any other per-task path (/mj/task/{id}/image-seed …) is the caller's own task only, on its channel.
				const m = /^\/mj\/task\/([^/]+)\/.+$/.exec(url.pathname)
				if (m) return fetchOwnedTask(svc, token.accountId, decodeURIComponent(m[1]!), url.pathname + url.search, request, requestId, false)
				// Never forwarded: another task read, not bound to one of the caller's tasks (the proxy answers any task by id,
				// as trueai-org's `list-by-ids` did before the route above), and the proxy's own accounts and administration, the
				// operator's: `/mj/account/*` (novicezk's list and fetch answer each Discord account with its userToken, `settings`
				// changes one) and `/mj/admin/*` (trueai-org's: accounts, users, every task, logs, restart; `current` answers the
				// secret it was called with).
				if (/^\/mj\/(?:task|account|admin)(?:\/|$)/.test(url.pathname)) throw new GatewayError('not_found', `No route ${url.pathname.slice(0, 200)}`, { code: 'not_found' })
				const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
				return forwardAny(serviceChannels(svc, 'imgsvc', MJ_MODELS), { path: url.pathname + url.search, method: request.method, inbound: request.headers, body, signal: request.signal, requestId }, 'Midjourney')
			},
			{ parse: 'none', response: mjErrors, detail: { summary: 'Other midjourney-proxy routes (passed through unbilled)', description: 'Uploads (upload-discord-images) and the proxy\'s own routes; per-task paths only for the caller\'s tasks; other task reads and the proxy\'s `/mj/account` and `/mj/admin` APIs are 404.' } },
		)
