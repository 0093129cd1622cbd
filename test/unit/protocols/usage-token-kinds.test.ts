/**
 * The usage decoders read the sub-counts vendors price apart (each a share of a total) and the encoders give them back
 * in the fields the client's protocol has: OpenAI `audio_tokens`, Gemini modality details, Anthropic `cache_creation`.
 */
import { describe, expect, it } from 'bun:test'
import { decodePartialUsage, decodeUsage as anthropicDecode, encodeUsage as anthropicEncode } from '../../../src/protocols/anthropic-messages/usage'
import { decodeUsage as geminiDecode, encodeUsage as geminiEncode } from '../../../src/protocols/gemini/usage'
import { decodeUsage as openaiDecode } from '../../../src/protocols/openai-chat/usage'

describe('usage sub-counts priced apart', () => {
	it('should read OpenAI audio tokens as shares of the uncached prompt and of the completion', () => {
		const u = openaiDecode({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 30, audio_tokens: 90 }, completion_tokens_details: { audio_tokens: 40 } })
		expect(u).toEqual({ input: 70, output: 50, cacheRead: 30, cacheWrite: 0, reasoning: 0, audioInput: 70, audioOutput: 40 })
	})

	it('should read Gemini audio input less its cached part (its own share of the cache reads), and audio and image candidates', () => {
		const u = geminiDecode({
			promptTokenCount: 1000,
			cachedContentTokenCount: 400,
			candidatesTokenCount: 1300,
			thoughtsTokenCount: 20,
			promptTokensDetails: [{ modality: 'TEXT', tokenCount: 200 }, { modality: 'AUDIO', tokenCount: 800 }],
			cacheTokensDetails: [{ modality: 'AUDIO', tokenCount: 400 }],
			candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: 10 }, { modality: 'IMAGE', tokenCount: 1290 }],
		})
		expect(u).toEqual({ input: 600, output: 1320, cacheRead: 400, cacheWrite: 0, reasoning: 20, audioInput: 400, audioCacheRead: 400, imageOutput: 1290 })
	})

	it("should read Gemini input images and the built-in tools' fed-back audio and images as shares of the uncached input", () => {
		const u = geminiDecode({
			promptTokenCount: 1000,
			cachedContentTokenCount: 300,
			toolUsePromptTokenCount: 50,
			candidatesTokenCount: 10,
			promptTokensDetails: [{ modality: 'TEXT', tokenCount: 100 }, { modality: 'IMAGE', tokenCount: 800 }, { modality: 'AUDIO', tokenCount: 100 }],
			cacheTokensDetails: [{ modality: 'IMAGE', tokenCount: 300 }],
			toolUsePromptTokensDetails: [{ modality: 'TEXT', tokenCount: 20 }, { modality: 'IMAGE', tokenCount: 30 }],
		})
		expect(u).toEqual({ input: 750, output: 10, cacheRead: 300, cacheWrite: 0, reasoning: 0, audioInput: 100, imageInput: 530, toolUseInput: 50 })
		// Back to a Gemini client: the tools' tokens apart from the prompt as Gemini gives them, the prompt's split
		// summing to the prompt, text being what is left.
		expect(geminiEncode(u!)).toMatchObject({ promptTokenCount: 1000, toolUsePromptTokenCount: 50, totalTokenCount: 1060 })
		expect(geminiEncode(u!).promptTokensDetails).toEqual([
			{ modality: 'TEXT', tokenCount: 370 },
			{ modality: 'IMAGE', tokenCount: 530 },
			{ modality: 'AUDIO', tokenCount: 100 },
		])
	})

	it('should read and write Anthropic 1-hour cache writes, in whole and partial usage', () => {
		const wire = { input_tokens: 5, output_tokens: 7, cache_creation_input_tokens: 300, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 } }
		const u = anthropicDecode(wire)
		expect(u).toEqual({ input: 5, output: 7, cacheRead: 0, cacheWrite: 300, reasoning: 0, cacheWriteLong: 200 })
		expect(decodePartialUsage(wire)).toEqual({ input: 5, output: 7, cacheWrite: 300, cacheWriteLong: 200 })
		expect(anthropicEncode(u)).toMatchObject({ cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 } })
	})
})
