import { describe, expect, it } from 'bun:test'
import { chosenCap, contextRoom, MIN_FITTED_OUTPUT, outputRoom } from '../../../src/relay/output-limit'
import type { Channel } from '../../../src/routing/catalog'

const channel = (type: Channel['type']): Channel => ({ id: 1, name: type, type, baseUrl: 'http://x', apiKey: 'k', models: ['m'], modelMap: {}, priority: 0, weight: 1, settings: {} })
const anthropic = channel('anthropic')
const openai = channel('openai')
const gemini = channel('gemini')
const WINDOW = { contextWindow: 200_000, maxOutput: 64_000 }

describe('outputRoom', () => {
	it('should leave the window less the estimate and its margin', () => {
		expect(outputRoom(200_000, 150_000)).toBe(200_000 - 187_500 - 1024)
		expect(outputRoom(1_000_000, 150_000)).toBe(1_000_000 - 187_500 - 1024)
	})

	it('should never go below the floor, however long the prompt', () => {
		expect(outputRoom(200_000, 158_000)).toBe(MIN_FITTED_OUTPUT)
		expect(outputRoom(200_000, 400_000)).toBe(MIN_FITTED_OUTPUT)
	})
})

describe('chosenCap', () => {
	it('should be the maximum or the cap assumed when the client named none', () => {
		expect(chosenCap(undefined, { maxOutputTokens: null }, 64_000)).toBe(64_000)
		expect(chosenCap(undefined, { maxOutputTokens: 16_384 }, 64_000)).toBe(16_384)
	})

	it('should be the maximum a cap above it is lowered to', () => {
		expect(chosenCap(100_000, { maxOutputTokens: 64_000 }, 4096)).toBe(64_000)
	})

	it("should leave the client's own cap alone", () => {
		expect(chosenCap(60_000, { maxOutputTokens: 64_000 }, 4096)).toBeUndefined()
		expect(chosenCap(100_000, { maxOutputTokens: null }, 4096)).toBeUndefined()
	})
})

describe('contextRoom', () => {
	const never = () => {
		throw new Error('counted')
	}

	it('should fit a chosen cap the counted prompt leaves no room for, converted for Anthropic', () => {
		expect(contextRoom('openai-chat', [anthropic], WINDOW, 64_000, 300_000, () => 150_000)).toBe(outputRoom(200_000, 150_000))
		expect(contextRoom('gemini', [gemini, anthropic], WINDOW, 64_000, 300_000, () => 150_000)).toBe(outputRoom(200_000, 150_000))
		expect(contextRoom('openai-responses', [anthropic], WINDOW, 64_000, 300_000, () => 190_000)).toBe(MIN_FITTED_OUTPUT)
	})

	it('should not count a prompt whose bound leaves room for the cap', () => {
		expect(contextRoom('openai-chat', [anthropic], WINDOW, 64_000, 100_000, never)).toBeUndefined()
	})

	it('should leave the cap when the counted prompt leaves room for it', () => {
		expect(contextRoom('openai-chat', [anthropic], WINDOW, 64_000, 150_000, () => 100_000)).toBeUndefined()
	})

	it('should leave it without a window, a chosen cap, or a channel whose vendor counts the cap against the window', () => {
		expect(contextRoom('openai-chat', [anthropic], { maxOutput: 64_000 }, 64_000, 300_000, never)).toBeUndefined()
		expect(contextRoom('openai-chat', [anthropic], WINDOW, undefined, 300_000, never)).toBeUndefined()
		// OpenAI and Gemini refuse only a prompt over the window; a native Anthropic request names its own cap.
		expect(contextRoom('anthropic-messages', [openai, gemini], WINDOW, 64_000, 300_000, never)).toBeUndefined()
		expect(contextRoom('anthropic-messages', [anthropic], WINDOW, 64_000, 300_000, never)).toBeUndefined()
	})
})
