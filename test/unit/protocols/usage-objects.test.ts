/**
 * The usage encoders write every field the client's vendor always sends, from the canonical usage only: Anthropic
 * `cache_creation`, `output_tokens_details`, `service_tier` and `speed` (and `server_tool_use` when searches ran), OpenAI's full details objects.
 * Integration tests (test/integration/protocols/usage-objects.test.ts) check the same through the SDKs.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../src/core/events'
import type { Usage } from '../../../src/core/ir'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { decodePartialUsage, decodeUsage, encodeUsage as anthropicEncode } from '../../../src/protocols/anthropic-messages/usage'
import { decodeUsage as geminiDecode, encodeUsage as geminiEncode, TIER_HEADER } from '../../../src/protocols/gemini/usage'
import { encodeUsage as openaiEncode } from '../../../src/protocols/openai-chat/usage'
import { collect, from, payloads } from './anthropic-messages/helpers'

/** A streamed answer's payloads, loosely typed for reading. */
const streamed = async (events: StreamEvent[], ctx: { model: string; countInputTokens?: () => number }) =>
	payloads(await collect(anthropicMessages.encodeStream(from(events), ctx))) as Array<Record<string, any>>

const base: Usage = { input: 5, output: 9, cacheRead: 3, cacheWrite: 300, reasoning: 0 }

describe('Anthropic usage from canonical usage', () => {
	it('should split cache writes by TTL, 5-minute ones being those not reported as 1-hour', () => {
		expect(anthropicEncode(base)).toEqual({
			input_tokens: 5,
			cache_creation_input_tokens: 300,
			cache_read_input_tokens: 3,
			cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 0 },
			output_tokens: 9,
			output_tokens_details: { thinking_tokens: 0 },
			service_tier: 'standard',
			speed: 'standard',
		})
		expect(anthropicEncode({ ...base, cacheWriteLong: 200 }).cache_creation).toEqual({ ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 })
	})

	it('should name the tier that served the request, and null for one Anthropic has no name for', () => {
		expect(anthropicEncode({ ...base, tier: 'priority' }).service_tier).toBe('priority')
		expect(anthropicEncode({ ...base, tier: 'flex' }).service_tier).toBeNull()
	})

	it("should name fast mode in `speed`, OpenAI's Ultrafast as the nearest to it, and read it back as the fast tier", () => {
		expect([anthropicEncode({ ...base, tier: 'fast' }).speed, anthropicEncode({ ...base, tier: 'fast' }).service_tier]).toEqual(['fast', 'standard'])
		expect(anthropicEncode({ ...base, tier: 'ultrafast' }).speed).toBe('fast')
		expect(anthropicEncode({ ...base, tier: 'priority' }).speed).toBe('standard')
		expect(decodeUsage({ input_tokens: 5, output_tokens: 9, speed: 'fast' }).tier).toBe('fast')
		expect(decodeUsage({ input_tokens: 5, output_tokens: 9, speed: 'standard' }).tier).toBeUndefined()
		// A stream reports it in message_start; message_delta has no speed and leaves it.
		expect(decodePartialUsage({ input_tokens: 5, output_tokens: 1, speed: 'fast' }).tier).toBe('fast')
		expect('tier' in decodePartialUsage({ output_tokens: 9 })).toBe(false)
	})

	it("should read Gemini's served tier from usageMetadata.serviceTier and tell a Gemini client the tier priced apart", () => {
		expect(geminiDecode({ promptTokenCount: 5, candidatesTokenCount: 9, serviceTier: 'priority' })?.tier).toBe('priority')
		expect(geminiDecode({ promptTokenCount: 5, candidatesTokenCount: 9, serviceTier: 'flex' })?.tier).toBe('flex')
		expect(geminiDecode({ promptTokenCount: 5, candidatesTokenCount: 9, serviceTier: 'standard' })?.tier).toBeUndefined()
		expect(geminiEncode({ ...base, tier: 'priority' }).serviceTier).toBe('priority')
		expect('serviceTier' in geminiEncode(base)).toBe(false)
		expect('serviceTier' in geminiEncode({ ...base, tier: 'fast' })).toBe(false)
	})

	it("should read the enum's spelling of a Gemini tier, and Vertex's trafficType where serviceTier is absent", () => {
		expect(geminiDecode({ promptTokenCount: 5, serviceTier: 'SERVICE_TIER_PRIORITY' })?.tier).toBe('priority')
		expect(geminiDecode({ promptTokenCount: 5, trafficType: 'ON_DEMAND_PRIORITY' })?.tier).toBe('priority')
		expect(geminiDecode({ promptTokenCount: 5, trafficType: 'ON_DEMAND_FLEX' })?.tier).toBe('flex')
		for (const trafficType of ['ON_DEMAND', 'PROVISIONED_THROUGHPUT', 'constructor']) expect(geminiDecode({ promptTokenCount: 5, trafficType })?.tier).toBeUndefined()
		expect(TIER_HEADER.decode('flex')).toBe('flex')
		expect(TIER_HEADER.decode('standard')).toBeUndefined()
		expect([TIER_HEADER.encode('priority'), TIER_HEADER.encode(undefined), TIER_HEADER.encode('fast')]).toEqual(['priority', 'standard', 'standard'])
	})

	it('should read and tell a US-only run in inference_geo, and say nothing of a geography it does not know', () => {
		expect(decodeUsage({ input_tokens: 5, output_tokens: 9, inference_geo: 'us' }).inferenceGeo).toBe('us')
		expect(decodeUsage({ input_tokens: 5, output_tokens: 9, inference_geo: 'global' }).inferenceGeo).toBeUndefined()
		expect(decodePartialUsage({ input_tokens: 5, output_tokens: 1, inference_geo: 'us' }).inferenceGeo).toBe('us')
		expect(anthropicEncode({ ...base, inferenceGeo: 'us' }).inference_geo).toBe('us')
		expect('inference_geo' in anthropicEncode(base)).toBe(false)
	})

	it('should count the web searches that ran in server_tool_use, and send none when none ran', () => {
		expect(anthropicEncode({ ...base, webSearches: 2 }).server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 })
		expect('server_tool_use' in anthropicEncode(base)).toBe(false)
	})

	it('should repeat in message_delta the writes, tier and searches an upstream reports only at its end', async () => {
		const events: StreamEvent[] = [
			{ type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Hi' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
			{ type: 'usage', usage: { ...base, cacheWriteLong: 200, tier: 'priority', webSearches: 1 } },
		]
		const out = await streamed(events, { model: 'claude-client', countInputTokens: () => 42 })
		expect(out[0].message.usage).toEqual({
			input_tokens: 42,
			cache_creation_input_tokens: 0,
			cache_read_input_tokens: 0,
			cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
			output_tokens: 0,
			output_tokens_details: { thinking_tokens: 0 },
			service_tier: 'standard',
			speed: 'standard',
		})
		expect(out.find((p) => p.type === 'message_delta')?.usage).toEqual({
			output_tokens: 9,
			input_tokens: 5,
			cache_creation_input_tokens: 300,
			cache_read_input_tokens: 3,
			output_tokens_details: { thinking_tokens: 0 },
			server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
			cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
			service_tier: 'priority',
		})
	})

	it('should not repeat in message_delta what message_start already said', async () => {
		const events: StreamEvent[] = [
			{ type: 'start', id: 'msg_1', model: 'm', usage: { input: 5, cacheWrite: 10, cacheWriteLong: 10 } },
			{ type: 'finish', reason: 'end_turn' },
			{ type: 'usage', usage: { output: 4 } },
		]
		const out = await streamed(events, { model: 'claude-client' })
		expect(out[0].message.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 10 })
		expect(out.find((p) => p.type === 'message_delta')?.usage).toEqual({ output_tokens: 4, input_tokens: 5, cache_creation_input_tokens: 10, output_tokens_details: { thinking_tokens: 0 } })
	})
})

describe('OpenAI chat usage from canonical usage', () => {
	it('should send every details count, audio from the upstream and predictions 0', () => {
		expect(openaiEncode({ ...base, cacheWrite: 0, reasoning: 4, audioInput: 2, audioOutput: 1 })).toEqual({
			prompt_tokens: 8,
			completion_tokens: 9,
			total_tokens: 17,
			prompt_tokens_details: { cached_tokens: 3, audio_tokens: 2 },
			completion_tokens_details: { reasoning_tokens: 4, audio_tokens: 1, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
		})
	})
})
