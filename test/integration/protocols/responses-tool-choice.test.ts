/**
 * A Responses `tool_choice` naming a tool the request does not have: refused 400 as OpenAI refuses it (`Tool choice
 * 'x' not found in 'tools' parameter.`, `param: tool_choice`) for every model, before any upstream call or charge.
 * Before, Claude and Gemini were asked to force a call of a tool they were not offered. Names declared inside a
 * namespace, or of tools a replayed client-run search loaded (`offeredTools`), are the request's too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { CODEX_TOOL_SEARCH, codexSearchOutput } from './codex-shape'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }]
const sent = () => (['openai', 'anthropic', 'gemini'] as Upstream[]).map((u) => m.mocks[u].requests.length)

describe('a tool_choice naming no tool of the request', () => {
	for (const up of ['openai', 'anthropic', 'gemini'] as const)
		it(`should be refused in OpenAI's words, named or allowed (${up})`, async () => {
			const acct = await m.account()
			const before = sent()
			for (const tool_choice of [
				{ type: 'function' as const, name: 'get_time' },
				{ type: 'allowed_tools' as const, mode: 'auto' as const, tools: [{ type: 'function', name: 'get_weather' }, { type: 'function', name: 'get_time' }] },
			]) {
				const err: any = await acct.openai.responses.create({ model: MODEL[up], input: 'Weather in Paris?', tools, tool_choice }).catch((e) => e)
				expect(err.status).toBe(400)
				expect(err.error).toEqual({ type: 'invalid_request_error', param: 'tool_choice', code: null, message: "Tool choice 'get_time' not found in 'tools' parameter." })
			}
			expect(sent()).toEqual(before)
			await m.app.svc.ledger.flush()
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
	it('should leave a name declared inside a namespace to the vendor', async () => {
		const acct = await m.account()
		const namespaced = [{ type: 'namespace', name: 'weather', description: 'Weather tools', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }] }]
		const body = { model: MODEL.openai, input: 'Weather?', tools: namespaced, tool_choice: { type: 'function', name: 'get_weather' } }
		const res = await fetch(`${m.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
		expect(res.status).toBe(200)
		expect(lastRequest(m.mocks.openai).body.tool_choice).toEqual(body.tool_choice)
	})
	it('should take a function a replayed client-run search loaded', async () => {
		const acct = await m.account()
		const cal = { type: 'function', name: 'cal_create', defer_loading: true, parameters: { type: 'object', properties: { title: { type: 'string' } } } }
		const input = [
			{ role: 'user', content: 'Book the standup' },
			{ type: 'tool_search_call', call_id: 'call_s1', status: 'completed', execution: 'client', arguments: { query: 'calendar' } },
			codexSearchOutput('call_s1', [cal]),
		]
		const body = { model: MODEL.anthropic, input, tools: [CODEX_TOOL_SEARCH], tool_choice: { type: 'function', name: 'cal_create' } }
		const res = await fetch(`${m.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
		expect(res.status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.tool_choice).toMatchObject({ type: 'tool', name: 'cal_create' })
	})
	it('should force a tool the request has', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.anthropic, input: 'Hi', tools, tool_choice: { type: 'function', name: 'get_weather' } })
		expect(r.output.some((o) => o.type === 'function_call' && o.name === 'get_weather')).toBe(true)
		expect(lastRequest(m.mocks.anthropic).body.tool_choice).toMatchObject({ type: 'tool', name: 'get_weather' })
	})
})
