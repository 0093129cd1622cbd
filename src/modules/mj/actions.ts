/**
 * Which price a midjourney-proxy submit takes (github.com/novicezk/midjourney-proxy, API `/mj/submit/*`), and which
 * earlier task a follow-up acts on. Prices are model entries named after the action: mj_imagine, mj_upscale,
 * mj_variation, mj_blend, mj_describe, and mj_action for every other job (reroll, zoom, pan, inpaint, modal, shorten,
 * video, edits …). midjourney-proxy-plus's InsightFace face swap (`POST /mj/insight-face/swap`, a SWAP_FACE task;
 * new-api's `RelayModeSwapFace`) is mj_swap_face.
 * @module
 */

export const MJ_MODELS = ['mj_imagine', 'mj_upscale', 'mj_variation', 'mj_blend', 'mj_describe', 'mj_action', 'mj_swap_face'] as const
export type MjModel = (typeof MJ_MODELS)[number]

/** Submit paths that create no task (uploads): passed through unbilled. */
const NOT_TASKS = new Set(['upload-discord-images'])

/**
 * The action model of `/mj/submit/<action>`, or undefined when the call creates no task.
 * @example mjActionModel('action', { customId: 'MJ::JOB::upsample::1::abc' }) // 'mj_upscale'
 */
export function mjActionModel(action: string, body: Record<string, unknown>): MjModel | undefined {
	if (NOT_TASKS.has(action)) return undefined
	switch (action) {
		case 'imagine':
			return 'mj_imagine'
		case 'blend':
			return 'mj_blend'
		case 'describe':
			return 'mj_describe'
		case 'change': {
			// {taskId, action: UPSCALE | VARIATION | REROLL, index}
			const a = String(body.action ?? '').toUpperCase()
			return a === 'UPSCALE' ? 'mj_upscale' : a === 'VARIATION' ? 'mj_variation' : 'mj_action'
		}
		case 'simple-change': {
			// {content: "<taskId> U1"}: U = upscale, V = variation, R = reroll
			const op = String(body.content ?? '').trim().split(/\s+/)[1] ?? ''
			return /^U\d$/i.test(op) ? 'mj_upscale' : /^V\d$/i.test(op) ? 'mj_variation' : 'mj_action'
		}
		case 'action': {
			// {taskId, customId: "MJ::JOB::upsample::1::<hash>" | "MJ::JOB::variation::2::<hash>" | …}
			const id = String(body.customId ?? '').toLowerCase()
			return id.includes('::upsample') ? 'mj_upscale' : id.includes('::variation') ? 'mj_variation' : 'mj_action'
		}
		default:
			return 'mj_action'
	}
}

/**
 * The action model of `POST /mj/insight-face/<op>`: every InsightFace call creates a task (swap is the one
 * midjourney-proxy-plus documents; another would still be a job, priced as mj_action like an unknown submit).
 * @example mjInsightFaceModel('swap') // 'mj_swap_face'
 */
export const mjInsightFaceModel = (op: string): MjModel => (op === 'swap' ? 'mj_swap_face' : 'mj_action')

/** The earlier task a follow-up acts on: `taskId`, or the first word of simple-change's `content`. */
export function mjParentId(action: string, body: Record<string, unknown>): string | undefined {
	if (typeof body.taskId === 'string' && body.taskId) return body.taskId
	if (action === 'simple-change' && typeof body.content === 'string') return body.content.trim().split(/\s+/)[0] || undefined
	return undefined
}

/** midjourney-proxy return codes that mean the job was taken (1 submitted, 22 queued) or already exists (21). */
export const MJ_ACCEPTED = new Set([1, 22])
export const MJ_EXISTED = 21
