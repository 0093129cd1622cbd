/**
 * Mock midjourney-proxy (github.com/novicezk/midjourney-proxy): `POST /mj/submit/{imagine,blend,describe,change,
 * simple-change,action,modal}` and midjourney-proxy-plus's `POST /mj/insight-face/swap` ({sourceBase64, targetBase64}:
 * a SWAP_FACE task) answer `{code, description, result, properties}` (1 submitted, 3 parent not found,
 * 4 validation error, 21 already exists, 22 queued, 24 banned prompt), `GET /mj/task/{id}/fetch` advances and answers
 * the task, `POST /mj/task/list-by-condition` and `GET /mj/task/list` answer task arrays without advancing them;
 * `POST /mj/task/list-by-ids` is list-by-condition under another name, as trueai-org/midjourney-proxy's TaskController
 * declares it (`[HttpPost("list-by-condition")] [HttpPost("list-by-ids")]`), answering any task by id.
 * Beyond those: midjourney-proxy-plus's `POST /mj/submit/shorten` ({prompt}) and `GET /mj/task/{id}/image-seed` (code 1
 * with the seed once the task succeeded, else 400 code 4; 404 code 3 for an unknown id), new-api's `POST
 * /mj/submit/video` (`{taskId, index}` of an earlier task, or `{image, prompt}`), trueai-org/midjourney-proxy's
 * `POST /mj/submit/edits` (also `edit`) and `/mj/submit/retexture` ({image, prompt}) and `POST /mj/task/{id}/cancel`
 * (an empty 200; an unfinished task fails).
 * Auth is the `mj-api-secret` header. Prompts: `#banned` → code 24, `#queue` → code 22, `#fail` → the task fails.
 * An action that needs a modal confirmation (a `MJ::CustomZoom::` or `MJ::Inpaint::` customId) makes a task in status
 * MODAL and answers code 21 "Waiting for window confirm" with its id; `/mj/submit/modal` with that `taskId` submits the
 * same task, answering code 1 with the same id (litter-coder/midjourney-proxy-plus docs/api.md, "需调用/mj/submit/modal
 * 进行二次提交"; the proxies' SubmitModal submits the target task itself). Until then a fetch says MODAL.
 * @module
 */

import { asArr, asNum, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { startMockServer } from '../shared/server'
import type { VendorMock } from '../shared/types'
import { type MockTask, type TaskMockOptions, percentOf, phaseOf, poll } from './progress'

export interface MidjourneyMock extends VendorMock {
	readonly tasks: Map<string, MockTask>
}

const STATUS = { queued: 'SUBMITTED', running: 'IN_PROGRESS', done: 'SUCCESS', failed: 'FAILURE' } as const

function view(t: MockTask, origin: string): Obj {
	const phase = phaseOf(t)
	if (t.meta.modal) return { id: t.id, action: t.meta.action, prompt: t.prompt, promptEn: t.prompt, description: 'Waiting for window confirm', state: '', submitTime: t.createdAt * 1000, startTime: null, finishTime: null, imageUrl: null, status: 'MODAL', progress: '0%', failReason: '', buttons: [], properties: { finalPrompt: t.prompt } }
	return {
		id: t.id,
		action: t.meta.action,
		prompt: t.prompt,
		promptEn: t.prompt,
		description: '/imagine ' + t.prompt,
		state: '',
		submitTime: t.createdAt * 1000,
		startTime: phase === 'queued' ? null : t.createdAt * 1000 + 1,
		finishTime: phase === 'done' || phase === 'failed' ? t.createdAt * 1000 + 2 : null,
		imageUrl: phase === 'done' ? `${origin}/attachments/${t.id}.png` : null,
		status: STATUS[phase],
		progress: `${percentOf(t)}%`,
		failReason: phase === 'failed' ? 'Job failed: content moderation' : '',
		buttons: phase === 'done' && t.meta.action === 'IMAGINE' ? [{ customId: `MJ::JOB::upsample::1::${t.id}`, label: 'U1' }, { customId: `MJ::JOB::variation::1::${t.id}`, label: 'V1' }] : [],
		properties: { finalPrompt: t.prompt },
	}
}

const answer = (code: number, description: string, result: unknown = null, properties: Obj = {}): Reply => json({ code, description, result, properties })

/** Starts the mock on a free port; `url` is the bare origin (an `imgsvc` channel's base_url). */
export async function startMidjourneyMock(opts: TaskMockOptions): Promise<MidjourneyMock> {
	const tasks = new Map<string, MockTask>()
	const steps = opts.steps ?? 2
	let seq = 1712000000000
	/** Follow-ups already made: `<parent>:<action>:<index>` → task id (a repeat answers code 21). */
	const done = new Map<string, string>()

	const submit = (action: string, prompt: string, meta: Obj = {}): Reply => {
		if (prompt.includes('#banned')) return answer(24, 'Banned prompt: it may contain sensitive words', null, { promptEn: prompt, bannedWord: 'banned' })
		const id = String(seq++)
		tasks.set(id, { id, prompt, polls: 0, steps, fails: prompt.includes('#fail'), createdAt: Math.floor(Date.now() / 1000), meta: { action, ...meta } })
		return prompt.includes('#queue') ? answer(22, 'In queue, there are 1 tasks ahead', id, { numberOfQueues: 1 }) : answer(1, 'Submit success', id, { discordInstanceId: '1118138338562560102' })
	}

	const followUp = (parentId: string | undefined, action: string, index: number): Reply => {
		const parent = parentId ? tasks.get(parentId) : undefined
		if (!parent) return answer(3, 'The related task does not exist or has expired')
		const key = `${parent.id}:${action}:${index}`
		const existing = done.get(key)
		if (existing) return answer(21, 'Task already exists', existing)
		const r = submit(action, parent.prompt.replace('#fail', ''), { parent: parent.id, index })
		if (r.type === 'json') done.set(key, String((r.body as Obj).result))
		return r
	}

	const route = (path: string, method: string, body: Obj, origin: string): Reply => {
		if (method === 'POST' && path.startsWith('/mj/submit/')) {
			switch (path.slice('/mj/submit/'.length)) {
				case 'imagine': {
					const prompt = asStr(body.prompt)
					return prompt ? submit('IMAGINE', prompt) : answer(4, 'prompt must not be empty')
				}
				case 'blend':
					return asArr(body.base64Array).length >= 2 ? submit('BLEND', 'blend') : answer(4, 'base64List must contain 2 to 5 images')
				case 'describe':
					return asStr(body.base64) ? submit('DESCRIBE', 'describe') : answer(4, 'base64 must not be empty')
				case 'change':
					return followUp(asStr(body.taskId), String(body.action ?? '').toUpperCase(), asNum(body.index) ?? 0)
				case 'simple-change': {
					const [id, op] = String(body.content ?? '').trim().split(/\s+/)
					return followUp(id, op?.startsWith('U') ? 'UPSCALE' : op?.startsWith('V') ? 'VARIATION' : 'REROLL', Number(op?.slice(1)) || 0)
				}
				case 'action': {
					const customId = String(body.customId ?? '')
					if (/^MJ::(CustomZoom|Inpaint)::/.test(customId)) {
						const parent = tasks.get(asStr(body.taskId) ?? '')
						if (!parent) return answer(3, 'The related task does not exist or has expired')
						const id = String(seq++)
						tasks.set(id, { id, prompt: parent.prompt, polls: 0, steps, fails: false, createdAt: Math.floor(Date.now() / 1000), meta: { action: customId.includes('Inpaint') ? 'INPAINT' : 'ACTION', parent: parent.id, modal: true } })
						return answer(21, 'Waiting for window confirm', id, { finalPrompt: parent.prompt, remix: true })
					}
					const parts = customId.split('::')
					return followUp(asStr(body.taskId), (parts[2] ?? 'action').toUpperCase(), Number(parts[3]) || 0)
				}
				case 'modal': {
					const t = tasks.get(asStr(body.taskId) ?? '')
					if (!t) return answer(3, 'The related task does not exist or has expired')
					if (!t.meta.modal) return answer(4, 'Unsupported modal')
					if (asStr(body.prompt)) t.prompt = asStr(body.prompt)!
					t.fails = t.prompt.includes('#fail')
					delete t.meta.modal
					return answer(1, 'Submit success', t.id, { discordInstanceId: '1118138338562560102' })
				}
				case 'upload-discord-images':
					return answer(1, 'success', asArr(body.base64Array).map((_, i) => `${origin}/attachments/upload-${i}.png`))
				case 'shorten': {
					const prompt = asStr(body.prompt)
					return prompt ? submit('SHORTEN', prompt) : answer(4, 'prompt must not be empty')
				}
				case 'video':
					// From one of the proxy's tasks (`taskId`, `index`) or from an image URL with a prompt.
					if (asStr(body.taskId)) return followUp(asStr(body.taskId), 'VIDEO', asNum(body.index) ?? 0)
					return asStr(body.image) ? submit('VIDEO', asStr(body.prompt) ?? 'video') : answer(4, 'image or taskId is required')
				case 'edit':
				case 'edits':
				case 'retexture': {
					const prompt = asStr(body.prompt)
					return prompt && asStr(body.image) ? submit(path.endsWith('retexture') ? 'RETEXTURE' : 'EDIT', prompt) : answer(4, 'image and prompt must not be empty')
				}
			}
		}
		if (method === 'POST' && path === '/mj/insight-face/swap')
			return asStr(body.sourceBase64) && asStr(body.targetBase64) ? submit('SWAP_FACE', 'swap face') : answer(4, 'sourceBase64 and targetBase64 are required')
		const fetch = /^\/mj\/task\/([^/]+)\/fetch$/.exec(path)
		if (method === 'GET' && fetch) {
			const t = tasks.get(fetch[1]!)
			if (!t) return { type: 'raw', status: 200, contentType: 'application/json', body: 'null' }
			if (!t.meta.modal) poll(t)
			return json(view(t, origin))
		}
		const seed = /^\/mj\/task\/([^/]+)\/image-seed$/.exec(path)
		if (method === 'GET' && seed) {
			const t = tasks.get(seed[1]!)
			if (!t) return json({ code: 3, description: 'The related task does not exist or has expired', result: null }, 404)
			return phaseOf(t) === 'done' ? answer(1, 'success', `${Number(t.id) % 4294967296}`) : json({ code: 4, description: 'The related task is not finished', result: null }, 400)
		}
		const cancel = /^\/mj\/task\/([^/]+)\/cancel$/.exec(path)
		if (method === 'POST' && cancel) {
			const t = tasks.get(cancel[1]!)
			if (t && phaseOf(t) !== 'done') Object.assign(t, { fails: true, polls: Math.max(t.polls, t.steps) })
			return { type: 'raw', status: 200, contentType: 'text/plain', body: '' }
		}
		if (method === 'POST' && (path === '/mj/task/list-by-condition' || path === '/mj/task/list-by-ids')) {
			const ids = asArr(body.ids).map(String)
			return json(ids.map((id) => tasks.get(id)).filter((t): t is MockTask => !!t).map((t) => view(t, origin)))
		}
		if (method === 'GET' && path === '/mj/task/list') return json([...tasks.values()].map((t) => view(t, origin)))
		return json({ code: 404, description: `Not found: ${method} ${path}` }, 404)
	}

	const mock = startMockServer(
		{
			basePath: '',
			handle(req) {
				if (req.headers.get('mj-api-secret') !== opts.apiKey) return json({ code: 401, description: 'Unauthorized' }, 401)
				if (req.jsonError) return answer(4, 'Invalid JSON body')
				return route(req.path, req.method, (req.body ?? {}) as Obj, req.origin)
			},
			statusBody: (status) => ({ code: status, description: `Mock error ${status}` }),
			streamError: () => ({ frame: '', status: 500 }),
		},
		{ apiKey: opts.apiKey },
	)
	return Object.assign(mock, { tasks })
}
