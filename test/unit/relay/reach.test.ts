/**
 * What a request can make its answer cost beyond text (src/relay/reach.ts), read from the request as each protocol
 * decodes it: audio parts and files that may hold sound, audio asked for as output, 1-hour and 12-hour cache writes,
 * the tier a request is bound to when every channel receives its `service_tier`, and the tiers only a request that
 * asks gets. Nothing is read for a model without such
 * prices.
 */
import { describe, expect, it } from 'bun:test'
import type { ProtocolCodec } from '../../../src/protocols/codec'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { gemini } from '../../../src/protocols/gemini'
import { geminiInteractions } from '../../../src/protocols/gemini-interactions'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { openaiResponses } from '../../../src/protocols/openai-responses'
import { reachOf } from '../../../src/relay/reach'
import type { Channel, ModelInfo } from '../../../src/routing/catalog'

const channel = (type: Channel['type'], o: Partial<Channel> = {}): Channel => ({ id: 1, name: type, type, baseUrl: 'http://x', apiKey: 'k', models: ['m'], modelMap: {}, priority: 0, weight: 1, settings: {}, ...o })
const price = (prices: Record<string, number>): ModelInfo => ({ name: 'm', inputPerMtok: 1, outputPerMtok: 2, prices })
const ALL = price({ audio_input_per_mtok: 40, audio_output_per_mtok: 80, cache_write_1h_per_mtok: 6, flex_input_per_mtok: 0.5 })
const reach = (client: ProtocolCodec, body: Record<string, unknown>, p = ALL, channels = [channel('openai')]) =>
	reachOf({ client, body, ir: client.decodeRequest({ model: 'm', ...body } as never) }, { channels, price: p })

const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA='

describe('reachOf', () => {
	it('should read nothing for a model without prices of its own kinds', () => {
		expect(reach(openaiChat, { messages: [{ role: 'user', content: 'hi' }] }, price({}))).toBeUndefined()
		expect(reach(openaiChat, { messages: [{ role: 'user', content: 'hi' }] }, price({ image_output_per_mtok: 30 }))).toBeUndefined()
	})

	it('should find audio input in audio parts and in files that may hold sound', () => {
		const text = reach(openaiChat, { messages: [{ role: 'user', content: 'hi' }] })
		expect(text).toEqual({ audioInput: false, audioOutput: false, cacheWriteLong: false })
		const audio = reach(openaiChat, { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: WAV, format: 'wav' } }] }] })
		expect(audio?.audioInput).toBe(true)
		const part = (mimeType: string) => ({ contents: [{ role: 'user', parts: [{ text: 'what is this?' }, { fileData: { mimeType, fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } }] }] })
		expect(reach(gemini, part('video/mp4'))?.audioInput).toBe(true)
		expect(reach(gemini, part('audio/mp3'))?.audioInput).toBe(true)
		expect(reach(gemini, part('application/pdf'))?.audioInput).toBe(false)
	})

	it('should find audio output asked for by OpenAI modalities, Gemini responseModalities or speechConfig, or a TTS model', () => {
		expect(reach(openaiChat, { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: [{ role: 'user', content: 'hi' }] })?.audioOutput).toBe(true)
		expect(reach(openaiChat, { modalities: ['text'], messages: [{ role: 'user', content: 'hi' }] })?.audioOutput).toBe(false)
		const contents = [{ role: 'user', parts: [{ text: 'say hi' }] }]
		expect(reach(gemini, { contents, generationConfig: { responseModalities: ['AUDIO'] } })?.audioOutput).toBe(true)
		expect(reach(gemini, { contents, generationConfig: { speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } } })?.audioOutput).toBe(true)
		expect(reach(gemini, { contents, generationConfig: { responseModalities: ['TEXT'] } })?.audioOutput).toBe(false)
		const tts = [channel('gemini', { modelMap: { m: 'gemini-2.5-flash-preview-tts' } })]
		expect(reach(anthropicMessages, { max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, ALL, tts)?.audioOutput).toBe(true)
	})

	it('should find 1-hour cache writes wherever a cache_control asks for them', () => {
		const at = (cache_control: Record<string, unknown>) => reach(anthropicMessages, { max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control }] }] })?.cacheWriteLong
		expect(at({ type: 'ephemeral', ttl: '1h' })).toBe(true)
		expect(at({ type: 'ephemeral', ttl: '5m' })).toBe(false)
		expect(at({ type: 'ephemeral' })).toBe(false)
		// A user text that merely mentions it is a string, not a cache_control.
		expect(reach(anthropicMessages, { max_tokens: 10, messages: [{ role: 'user', content: '{"ttl":"1h"}' }] })?.cacheWriteLong).toBe(false)
		// Anthropic's top-level automatic caching.
		expect(reach(anthropicMessages, { max_tokens: 10, cache_control: { type: 'ephemeral', ttl: '1h' }, messages: [{ role: 'user', content: 'hi' }] })?.cacheWriteLong).toBe(true)
	})

	it('should read the 1-hour ttl from the body as the client wrote it, spaces and all', () => {
		const fromText = (raw: string) => {
			const body = JSON.parse(raw) as Record<string, unknown>
			return reachOf({ client: anthropicMessages, body, raw, ir: anthropicMessages.decodeRequest({ model: 'm', ...body } as never) }, { channels: [channel('openai')], price: ALL })?.cacheWriteLong
		}
		expect(fromText('{"max_tokens": 10, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl" : "1h"}}]}]}')).toBe(true)
		expect(fromText('{"max_tokens": 10, "messages": [{"role": "user", "content": "{\\"ttl\\": \\"1h\\"}"}]}')).toBe(false)
		expect(fromText('{"max_tokens": 10, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]}]}')).toBe(false)
	})

	it("should find OpenAI's 12-hour cache writes in prompt_cache_options and breakpoints, for a model that prices them", () => {
		const OPENAI = price({ cache_write_12h_per_mtok: 1.5 })
		expect(reach(openaiResponses, { input: 'hi', prompt_cache_options: { ttl: '12h' } }, OPENAI)?.cacheWriteLong).toBe(true)
		expect(reach(openaiResponses, { input: 'hi', prompt_cache_options: { ttl: '30m' } }, OPENAI)?.cacheWriteLong).toBe(false)
		const breakpoint = (ttl: string) => ({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi', prompt_cache_breakpoint: { mode: 'explicit', ttl } }] }] })
		expect(reach(openaiResponses, breakpoint('12h'), OPENAI)?.cacheWriteLong).toBe(true)
		expect(reach(openaiResponses, breakpoint('30m'), OPENAI)?.cacheWriteLong).toBe(false)
	})

	it('should add Ultrafast or fast mode to the tiers only for a request that asks for them', () => {
		const TIERS = price({ ultrafast_input_per_mtok: 6, fast_output_per_mtok: 12 })
		expect(reach(openaiResponses, { input: 'hi', service_tier: 'ultrafast' }, TIERS)?.tiers).toEqual([undefined, 'priority', 'flex', 'ultrafast'])
		expect(reach(anthropicMessages, { max_tokens: 10, speed: 'fast', messages: [{ role: 'user', content: 'hi' }] }, TIERS, [channel('anthropic')])?.tiers).toEqual([undefined, 'priority', 'flex', 'fast'])
		expect(reach(anthropicMessages, { max_tokens: 10, speed: 'standard', messages: [{ role: 'user', content: 'hi' }] }, TIERS, [channel('anthropic')])?.tiers).toBeUndefined()
		expect(reach(openaiResponses, { input: 'hi', service_tier: 'priority' }, TIERS)?.tiers).toBeUndefined()
	})

	it('should bind the tier to flex or standard only when every channel receives the service_tier as written', () => {
		const messages = [{ role: 'user', content: 'hi' }]
		expect(reach(openaiChat, { service_tier: 'flex', messages })?.tiers).toEqual(['flex'])
		expect(reach(openaiChat, { service_tier: 'default', messages })?.tiers).toEqual([undefined])
		for (const tier of [undefined, 'auto', 'priority']) expect(reach(openaiChat, { service_tier: tier, messages })?.tiers).toBeUndefined()
		expect(reach(openaiChat, { service_tier: 'flex', messages }, ALL, [channel('openai'), channel('gemini')])?.tiers).toBeUndefined()
		expect(reach(openaiResponses, { service_tier: 'flex', input: 'hi' })?.tiers).toEqual(['flex'])
		expect(reach(openaiResponses, { service_tier: 'flex', input: 'hi' }, ALL, [channel('openai', { settings: { responses_api: false } })])?.tiers).toBeUndefined()
		// Gemini's `serviceTier`, whose default tier is called `standard`, to Gemini channels.
		const contents = [{ role: 'user', parts: [{ text: 'hi' }] }]
		expect(reach(gemini, { contents, serviceTier: 'flex' }, ALL, [channel('gemini')])?.tiers).toEqual(['flex'])
		expect(reach(gemini, { contents, serviceTier: 'standard' }, ALL, [channel('gemini')])?.tiers).toEqual([undefined])
		expect(reach(gemini, { contents, serviceTier: 'priority' }, ALL, [channel('gemini')])?.tiers).toBeUndefined()
		expect(reach(gemini, { contents, serviceTier: 'flex' }, ALL, [channel('openai')])?.tiers).toBeUndefined()
	})
	it('should hold the web searches a search tool may run, by its own limit, when the model prices them', () => {
		const SEARCH = price({ per_web_search: 10_000 })
		const messages = [{ role: 'user', content: 'news?' }]
		expect(reach(anthropicMessages, { max_tokens: 10, messages, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] }, SEARCH)?.webSearches).toBe(3)
		expect(reach(anthropicMessages, { max_tokens: 10, messages, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, SEARCH)?.webSearches).toBe(5)
		expect(reach(openaiResponses, { input: 'news?', tools: [{ type: 'web_search' }], max_tool_calls: 2 }, SEARCH)?.webSearches).toBe(2)
		expect(reach(openaiResponses, { input: 'news?', tools: [{ type: 'web_search_preview' }] }, SEARCH)?.webSearches).toBe(5)
		// Gemini's Google Search grounding names no limit: held at 5 (billed per query on Gemini 3, per prompt before).
		const contents = [{ role: 'user', parts: [{ text: 'news?' }] }]
		expect(reach(gemini, { contents, tools: [{ googleSearch: {} }] }, SEARCH, [channel('gemini')])?.webSearches).toBe(5)
		expect(reach(gemini, { contents, tools: [{ google_search: {} }] }, SEARCH, [channel('gemini')])?.webSearches).toBe(5)
		expect(reach(gemini, { contents, tools: [{ codeExecution: {} }] }, SEARCH, [channel('gemini')])?.webSearches).toBeUndefined()
		// The Interactions API's `{type: 'google_search'}`, which any vendor runs as its own search.
		expect(reach(geminiInteractions, { model: 'm', input: 'news?', tools: [{ type: 'google_search' }] }, SEARCH, [channel('anthropic')])?.webSearches).toBe(5)
		// No search tool, or a model without a search price: nothing held for searches.
		expect(reach(openaiResponses, { input: 'news?' }, SEARCH)?.webSearches).toBeUndefined()
		expect(reach(openaiResponses, { input: 'news?', tools: [{ type: 'web_search' }] }, price({}))).toBeUndefined()
	})
})
