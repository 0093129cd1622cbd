/**
 * The built-in model limits (src/routing/model-limits.ts) against the vendors' model pages: a figure here is what the
 * vendor documents for that model id, and an id the table does not know has none (nothing is made up).
 */
import { describe, expect, it } from 'bun:test'
import { builtInLimits, modelLimits } from '../../../src/routing/model-limits'

describe('builtInLimits', () => {
	it.each([
		// https://platform.claude.com/docs/en/models/…/overview ("Context window", "Max output")
		['claude-sonnet-4-5-20250929', 200_000, 64_000],
		['claude-opus-4-1', 200_000, 32_000],
		['claude-opus-4-6', 1_000_000, 128_000],
		['claude-sonnet-4-6', 1_000_000, 64_000],
		['claude-opus-4-7', 1_000_000, 128_000],
		['claude-opus-4-8', 1_000_000, 128_000],
		['claude-sonnet-5', 1_000_000, 128_000],
		['claude-opus-5-5', 1_000_000, 128_000],
		['claude-fable-5-1', 1_000_000, 128_000],
		['claude-haiku-4-5-20251001', 200_000, 64_000],
		['claude-3-5-haiku-20241022', 200_000, 8_192],
		// https://developers.openai.com/api/docs/models
		['gpt-4o-mini', 128_000, 16_384],
		['gpt-5-2025-08-07', 400_000, 128_000],
		['gpt-5.1', 400_000, 128_000],
		['gpt-5.2-2025-12-11', 400_000, 128_000],
		['gpt-5.1-codex-max', 400_000, 128_000],
		['gpt-5-codex', 400_000, 128_000],
		['gpt-5-pro', 400_000, 272_000],
		['gpt-5.4', 1_050_000, 128_000],
		['gpt-5.6-terra', 1_050_000, 128_000],
		['gpt-6-luna', 1_050_000, 128_000],
		['gpt-6.1-sol', 1_050_000, 128_000],
		['gpt-6.2-sol', 1_050_000, 128_000],
		['gpt-5-chat-latest', 128_000, 16_384],
		['gpt-5.2-chat-latest', 128_000, 16_384],
		['o3-mini', 200_000, 100_000],
		['o3-pro', 200_000, 100_000],
		// https://ai.google.dev/gemini-api/docs/models
		['gemini-2.5-flash', 1_048_576, 65_536],
		['gemini-2.5-flash-lite-preview-09-2025', 1_048_576, 65_536],
		['gemini-2.0-flash-001', 1_048_576, 8_192],
		['gemini-3-pro-preview', 1_048_576, 65_536],
		['gemini-3-flash-preview', 1_048_576, 65_536],
		['gemini-3.1-pro-preview', 1_048_576, 65_536],
		['gemini-3-pro-image-preview', 65_536, 32_768],
	])('should give %s its documented limits', (model, contextWindow, maxOutput) => {
		expect(builtInLimits(model)).toEqual({ contextWindow, maxOutput })
	})

	it("should know a Claude model by its Amazon Bedrock id (bare, inference profile or ARN)", () => {
		expect(builtInLimits('anthropic.claude-sonnet-4-5-20250929-v1:0')).toEqual({ contextWindow: 200_000, maxOutput: 64_000 })
		expect(builtInLimits('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toEqual({ contextWindow: 200_000, maxOutput: 64_000 })
		expect(builtInLimits('global.anthropic.claude-opus-4-7')).toEqual(builtInLimits('claude-opus-4-7'))
		expect(builtInLimits('arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0')).toEqual({ contextWindow: 200_000, maxOutput: 64_000 })
		expect(builtInLimits('amazon.nova-pro-v1:0')).toEqual({})
	})

	it('should know a Claude model by its Vertex AI id (`@` and the snapshot date)', () => {
		expect(builtInLimits('claude-sonnet-4-5@20250929')).toEqual({ contextWindow: 200_000, maxOutput: 64_000 })
		expect(builtInLimits('claude-haiku-4-5@20251001')).toEqual({ contextWindow: 200_000, maxOutput: 64_000 })
	})

	it('should know nothing of a model it has no figures for', () => {
		for (const m of ['claude-haiku-5-5', 'my-finetune', 'gpt-4o-mini-tts', 'gemini-2.5-flash-image', 'gpt-5.2-pro', 'gpt-6.2-astra', 'gpt-6.3-sol', 'gpt-5.5']) expect(builtInLimits(m)).toEqual({})
	})
})

describe('modelLimits', () => {
	it("should let the model entry's own figures win, and find a mapped model's", () => {
		expect(modelLimits('fast', { maxOutputTokens: 8000, contextWindow: undefined }, ['gpt-4.1-mini'])).toEqual({ contextWindow: 1_047_576, maxOutput: 8000 })
		expect(modelLimits('claude', undefined, ['claude-sonnet-4-6'])).toEqual({ contextWindow: 1_000_000, maxOutput: 64_000 })
		expect(modelLimits('unknown', undefined, [])).toEqual({})
	})
})
