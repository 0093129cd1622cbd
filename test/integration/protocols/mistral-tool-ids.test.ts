/**
 * Mistral's API (and Mistral chat templates on vLLM and the like) refuses a tool call id that is not nine letters or
 * digits ("Tool call id was toolu_… but must be a-z, A-Z, 0-9, with a length of 9"), so a Claude client's tool loop —
 * or any conversation that moved from another vendor — failed on its second turn. Such channels (Mistral's own URL, or
 * `settings.tool_call_ids: "alnum9"`) get the history's ids mapped, the same for a call and its result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { openaiAdapter } from '../../../src/providers/openai'
import type { Channel } from '../../../src/routing/catalog'
import { messages } from './clients'
import { lastRequest, type Matrix, SETUP_MS, startMatrix } from './harness'

let mistral: VendorMock
let m: Matrix
beforeAll(async () => {
	mistral = await startOpenAIMock({ apiKey: 'up-mistral', alnum9ToolCallIds: true })
	m = await startMatrix({
		channels: () => [
			{ name: 'mistral', type: 'openai', base_url: mistral.url, api_key: 'up-mistral', models: ['mistral-m'], model_map: { 'mistral-m': 'mistral-large-latest' } as Record<string, string>, settings: { tool_call_ids: 'alnum9' as const } },
			{ name: 'mistral-plain', type: 'openai', base_url: mistral.url, api_key: 'up-mistral', models: ['mistral-plain'] },
		],
		models: ['mistral-m', 'mistral-plain'].map((name) => ({ name, input_per_mtok: 2, output_per_mtok: 6 })),
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await mistral.stop()
})

const WEATHER = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }
const alnum9 = /^[A-Za-z0-9]{9}$/

describe("a Claude client's tool loop on a Mistral channel", () => {
	for (const stream of [false, true])
		it(`should send the history's tool call ids as nine letters or digits, the call and its result alike (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const ask = { model: 'mistral-m', max_tokens: 300, tools: [WEATHER] }
			const history = [
				{ role: 'user' as const, content: 'weather in Oslo?' },
				{ role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_01XyZ_from_claude', name: 'get_weather', input: { city: 'Oslo' } }] },
				{ role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_01XyZ_from_claude', content: 'sunny' }] },
			]
			const r = await messages(acct.anthropic, { ...ask, messages: history }, stream)
			expect(r.stop).toBe('end_turn')
			const sent = lastRequest(mistral).body.messages as Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>
			const callId = sent.find((x) => x.tool_calls)!.tool_calls![0]!.id
			expect(callId).toMatch(alnum9)
			expect(sent.find((x) => x.role === 'tool')!.tool_call_id).toBe(callId)
		})

	it('should be refused by such an upstream without the setting (what the mapping prevents)', async () => {
		const acct = await m.account()
		const history = [
			{ role: 'user' as const, content: 'weather in Oslo?' },
			{ role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_01XyZ_from_claude', name: 'get_weather', input: { city: 'Oslo' } }] },
			{ role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_01XyZ_from_claude', content: 'sunny' }] },
		]
		const err = await acct.anthropic.messages.create({ model: 'mistral-plain', max_tokens: 300, tools: [WEATHER], messages: history }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(String(err.message)).toContain('must be a-z, A-Z, 0-9, with a length of 9')
	})
})

describe('openaiAdapter.upstreamOptions', () => {
	const ch = (baseUrl: string, settings: Record<string, unknown> = {}) => ({ baseUrl, settings }) as unknown as Channel
	it("should map tool call ids for Mistral's API by its URL, and elsewhere by the setting", () => {
		expect(openaiAdapter.upstreamOptions!(ch('https://api.mistral.ai/v1'), 'm')).toEqual({ toolCallIds: 'alnum9', prefix: 'echoed' })
		expect(openaiAdapter.upstreamOptions!(ch('https://api.openai.com/v1'), 'm')).toEqual({})
		expect(openaiAdapter.upstreamOptions!(ch('https://mistral.ai.example.com/v1'), 'm')).toEqual({})
		expect(openaiAdapter.upstreamOptions!(ch('http://vllm:8000/v1', { tool_call_ids: 'alnum9' }), 'm')).toEqual({ toolCallIds: 'alnum9' })
	})
})
