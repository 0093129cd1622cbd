/**
 * What `/mj/*` and `/suno/*` forward: an allow list of the routes the task services document for their clients, each
 * entry naming where it comes from. Everything else — the proxies' accounts and administration, a route a new version
 * adds, a listed path written otherwise (another case, a trailing slash) — is 404 in the service's error shape and
 * never reaches the upstream, where it would go with the operator's secret, driven by any key holder. To serve a new
 * route: a task-creating submit goes in MJ_SUBMIT_ACTIONS (priced by mj/actions.ts, else as mj_action); anything an
 * operator wants passed through unbilled goes in the channel's `settings.extra_task_paths` (EXTRA_TASK_PATH).
 *
 * Routes served by their own handlers, beside the lists below: `GET /mj/task/{id}/fetch`; `GET /mj/task/{id}/image-seed`
 * (midjourney-proxy-plus, new-api's registerMjRouterGroup, trueai-org TaskController) and trueai-org's `POST
 * /mj/task/{id}/cancel`, each for one of the caller's tasks on the channel that made it; `POST
 * /mj/task/list-by-condition` (novicezk/midjourney-proxy TaskController), trueai-org/midjourney-proxy's `POST
 * /mj/task/list-by-ids`, `GET /mj/task/list` and `/mj/task/queue` (answered from the caller's own tasks); `POST
 * /suno/submit/{music|lyrics}`, `POST /suno/fetch`, `GET /suno/fetch/{id}` (QuantumNous/new-api router/relay-router.go,
 * the Suno task API as new-api and one-api relay it: nothing more).
 * @module
 */
import { GatewayError } from '../core/errors'
import type { Channel } from '../routing/catalog'

/** `POST /mj/submit/<action>`: every one creates a task (charged) but the upload. */
export const MJ_SUBMIT_ACTIONS: ReadonlySet<string> = new Set([
	// novicezk/midjourney-proxy SubmitController, the open-source proxy.
	...['imagine', 'change', 'simple-change', 'describe', 'blend'],
	// litter-coder/midjourney-proxy-plus docs/api.md, also in new-api's registerMjRouterGroup.
	...['action', 'modal', 'shorten', 'upload-discord-images'],
	// QuantumNous/new-api router/relay-router.go registerMjRouterGroup (RelayModeMidjourneyVideo, …Edits).
	...['video', 'edits'],
	// trueai-org/midjourney-proxy SubmitController: `edit` is its second name for edits. Not its `show`, which answers
	// the id of whichever task already holds a Discord job, another account's too.
	...['edit', 'retexture'],
])

/**
 * `POST /mj/insight-face/<op>`: the face swap of midjourney-proxy-plus and trueai-org (new-api's RelayModeSwapFace).
 * Not trueai-org's `video-swap`, a multipart upload the JSON route cannot relay.
 */
export const MJ_INSIGHT_FACE_OPS: ReadonlySet<string> = new Set(['swap'])

/** `POST /suno/submit/<action>` (new-api constant/task.go SunoActionMusic, SunoActionLyrics). */
export const SUNO_SUBMIT_ACTIONS = ['music', 'lyrics'] as const

/** A route that is not on the list: 404, in the shape of the path's service (http/error-shapes.ts). */
export const noRoute = (path: string): GatewayError => new GatewayError('not_found', `No route ${path.slice(0, 200)}`, { code: 'not_found' })

/**
 * An entry of a channel's `settings.extra_task_paths`: a method and an exact path under `/mj/` or `/suno/`, lowercase
 * plain segments, forwarded unbilled. Not under the billed or owned-task prefixes (`/mj/submit`, `/mj/insight-face`,
 * `/mj/task`, `/suno/submit`, `/suno/fetch`): a submit forwarded unbilled would be a free job, and a task path
 * unchecked another account's task.
 * @example 'GET /mj/account/list' // valid (an operator's choice); 'POST /mj/submit/foo' is refused
 */
export const EXTRA_TASK_PATH = '^(?:GET|POST|PUT|PATCH|DELETE) /(?!(?:mj/(?:submit|insight-face|task)|suno/(?:submit|fetch))(?:/|$))(?:mj|suno)(?:/(?!\\.\\.?(?:/|$))[a-z0-9_.-]+)+$'

/**
 * The channels among `channels` whose operator allowed `method path` in `settings.extra_task_paths`, in their order.
 * @example extraPathChannels(serviceChannels(svc, 'imgsvc', MJ_MODELS), 'GET', '/mj/account/list')
 */
export function extraPathChannels(channels: Channel[], method: string, path: string): Channel[] {
	const entry = `${method} ${path}`
	return channels.filter((ch) => {
		const extra = ch.settings.extra_task_paths
		return Array.isArray(extra) && extra.includes(entry)
	})
}
