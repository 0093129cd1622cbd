/**
 * Google's ADK (`@google/adk`, `useInteractionsApi: true`) answers an interaction that ended in function calls by
 * sending, with `previous_interaction_id`, the calls again (the model's whole last turn, thoughts included) before
 * their results (interactions_utils `getLatestUserContents`). The kept interaction already holds those steps: each
 * must reach the model once, on this turn and on the turns that continue it.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type Account, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix, THINKER, UPSTREAMS } from './harness'

/** A Gemini model whose channel serves Interactions clients from Gemini's own Interactions API. */
const NATIVE = 'gemini-ix'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks): NonNullable<GatewayConfig['channels']> => [
			{ name: 'ch-gemini-ix', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [NATIVE], model_map: { [NATIVE]: 'gemini-2.5-flash' }, settings: { interactions_api: true } },
		],
		models: [{ name: NATIVE, input_per_mtok: PRICE['gemini-m']!.input, output_per_mtok: PRICE['gemini-m']!.output }],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })

const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }

type Step = { type: string; id?: string; name?: string; arguments?: unknown }

/** The function calls in the conversation the upstream got last, as `name city`. */
function upstreamCalls(mock: keyof Matrix['mocks']): string[] {
	const body = lastRequest(m.mocks[mock]).body
	if (body.contents) return body.contents.flatMap((c: any) => c.parts.filter((p: any) => p.functionCall).map((p: any) => `${p.functionCall.name} ${p.functionCall.args.city}`))
	if (Array.isArray(body.input)) return body.input.filter((s: Step) => s.type === 'function_call').map((s: any) => `${s.name} ${s.arguments.city}`)
	if (mock === 'anthropic') return body.messages.flatMap((x: any) => (Array.isArray(x.content) ? x.content : []).filter((b: any) => b.type === 'tool_use').map((b: any) => `${b.name} ${b.input.city}`))
	return body.messages.flatMap((x: any) => (x.tool_calls ?? []).map((t: any) => `${t.function.name} ${JSON.parse(t.function.arguments).city}`))
}

const cases = [...UPSTREAMS.map((up) => ({ model: THINKER[up], mock: up })), { model: NATIVE, mock: 'gemini' as const }]

describe('ai.interactions: function results sent after the calls they answer, as ADK sends them', () => {
	for (const { model, mock } of cases) {
		it(`should send each call upstream once, on this turn and the next (${model})`, async () => {
			const ai = genai(await m.account())
			const generation_config = { thinking_summaries: 'auto' as const }
			const r = await ai.interactions.create({ model, input: '#tools what is the weather', tools: [weather], generation_config })
			expect(r.status).toBe('requires_action')
			const steps = r.steps as Step[]
			const calls = steps.filter((s) => s.type === 'function_call')
			expect(calls).toHaveLength(2)
			// ADK's input: the model's last turn again (every output step), then one result per call.
			const input = [...steps, ...calls.map((c, i) => ({ type: 'function_result', call_id: c.id, name: c.name, result: i ? 'rain' : 'sun' }))]
			const r2 = await ai.interactions.create({ model, input, tools: [weather], generation_config, previous_interaction_id: r.id } as never)
			expect(r2.status).toBe('completed')
			expect(r2.output_text).toBe('Tool results: sun; rain')
			expect(upstreamCalls(mock)).toEqual(['get_weather Paris', 'get_weather Tokyo'])
			const r3 = await ai.interactions.create({ model, input: 'and tomorrow?', tools: [weather], generation_config, previous_interaction_id: r2.id })
			expect(r3.output_text).toBe('Hello! You said: and tomorrow?')
			expect(upstreamCalls(mock)).toEqual(['get_weather Paris', 'get_weather Tokyo'])
		})
	}
})
