/**
 * Mock Suno task API, in the shape new-api and one-api relay (`dto/suno.go`): `POST /suno/submit/{music,lyrics}`
 * answers `{code:"success", message:"", data:"<task id>"}`; `GET /suno/fetch/{id}` advances the task and answers it
 * (`{task_id, action, status: SUBMITTED|IN_PROGRESS|SUCCESS|FAILURE, fail_reason, progress, data}`); `POST
 * /suno/fetch {ids}` answers several without advancing them. Bearer auth. Prompts: `#reject` → `code:"fail"`,
 * `#fail` → the task fails; a submit with no prompt at all is a 400.
 * @module
 */

import { asArr, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { startMockServer } from '../shared/server'
import type { VendorMock } from '../shared/types'
import { type MockTask, type TaskMockOptions, percentOf, phaseOf, poll } from './progress'

export interface SunoMock extends VendorMock {
	readonly tasks: Map<string, MockTask>
}

const STATUS = { queued: 'SUBMITTED', running: 'IN_PROGRESS', done: 'SUCCESS', failed: 'FAILURE' } as const

function view(t: MockTask, origin: string): Obj {
	const phase = phaseOf(t)
	const songs =
		t.meta.action === 'LYRICS'
			? { id: t.id, status: phase === 'done' ? 'complete' : 'running', title: 'Mock lyrics', text: `[Verse]\n${t.prompt}` }
			: [0, 1].map((i) => ({ id: `${t.id}-${i}`, status: phase === 'done' ? 'complete' : 'streaming', title: 'Mock song', audio_url: phase === 'done' ? `${origin}/files/${t.id}-${i}.mp3` : '', metadata: { tags: t.meta.tags ?? '', prompt: t.prompt, duration: 120 } }))
	return {
		task_id: t.id,
		action: t.meta.action,
		status: STATUS[phase],
		fail_reason: phase === 'failed' ? 'generation failed' : '',
		submit_time: t.createdAt,
		start_time: phase === 'queued' ? 0 : t.createdAt + 1,
		finish_time: phase === 'done' || phase === 'failed' ? t.createdAt + 2 : 0,
		progress: `${percentOf(t)}%`,
		data: phase === 'queued' ? null : songs,
	}
}

const ok = (data: unknown): Reply => json({ code: 'success', message: '', data })

/** Starts the mock on a free port; `url` is the bare origin (a `musicsvc` channel's base_url). */
export async function startSunoMock(opts: TaskMockOptions): Promise<SunoMock> {
	const tasks = new Map<string, MockTask>()
	const steps = opts.steps ?? 2

	const submit = (action: 'MUSIC' | 'LYRICS', body: Obj): Reply => {
		const prompt = asStr(body.prompt) ?? asStr(body.gpt_description_prompt)
		if (!prompt) return json({ code: 'invalid_request', message: 'prompt is required', data: null }, 400)
		if (prompt.includes('#reject')) return json({ code: 'fail', message: 'prompt rejected by the content filter', data: null })
		if (action === 'MUSIC' && body.task_id !== undefined && !tasks.has(String(body.task_id))) return json({ code: 'fail', message: 'task_id not found', data: null })
		const id = crypto.randomUUID()
		tasks.set(id, { id, prompt, polls: 0, steps, fails: prompt.includes('#fail'), createdAt: Math.floor(Date.now() / 1000), meta: { action, tags: body.tags } })
		return ok(id)
	}

	const mock = startMockServer(
		{
			basePath: '',
			handle(req) {
				if (req.headers.get('authorization') !== `Bearer ${opts.apiKey}`) return json({ code: 'unauthorized', message: 'invalid api key', data: null }, 401)
				if (req.jsonError) return json({ code: 'invalid_request', message: 'invalid JSON body', data: null }, 400)
				const body = (req.body ?? {}) as Obj
				const { method, path } = req
				if (method === 'POST' && path === '/suno/submit/music') return submit('MUSIC', body)
				if (method === 'POST' && path === '/suno/submit/lyrics') return submit('LYRICS', body)
				const one = /^\/suno\/fetch\/([^/]+)$/.exec(path)
				if (method === 'GET' && one) {
					const t = tasks.get(one[1]!)
					if (!t) return json({ code: 'not_found', message: 'task not found', data: null }, 404)
					poll(t)
					return ok(view(t, req.origin))
				}
				if (method === 'POST' && path === '/suno/fetch') {
					const ids = asArr(body.ids).map(String)
					return ok(ids.map((id) => tasks.get(id)).filter((t): t is MockTask => !!t).map((t) => view(t, req.origin)))
				}
				return json({ code: 'not_found', message: `Not found: ${method} ${path}`, data: null }, 404)
			},
			statusBody: (status) => ({ code: 'error', message: `Mock error ${status}`, data: null }),
			streamError: () => ({ frame: '', status: 500 }),
		},
		{ apiKey: opts.apiKey },
	)
	return Object.assign(mock, { tasks })
}
