/**
 * An outside audit through LangChain JS: `ChatOpenAI` (chat completions and `useResponsesApi`), `ChatAnthropic`,
 * `ChatGoogleGenerativeAI` and `OpenAIEmbeddings` pointed at the gateway, against models served by the three mock
 * vendors. Each test pins a behaviour LangChain users rely on, or a defect the audit found.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ChatAnthropic } from '@langchain/anthropic'
import { AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { ChatGoogleGenerativeAI } from '@langchain/google-genai'
import { ChatOpenAI } from '@langchain/openai'
import { z } from 'zod'
import { lastRequest, type Native, SETUP_MS, startNative } from './setup'

let n: Native
let key = ''
beforeAll(async () => {
	n = await startNative()
	key = (await n.app.account(100)).key
}, SETUP_MS)
afterAll(() => n.close())

const MODELS = ['gpt-4o-mini', 'claude-sonnet-5', 'gemini-2.5-flash'] as const
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

const chatOpenAI = (model: string, fields: Record<string, unknown> = {}) => new ChatOpenAI({ model, apiKey: key, configuration: { baseURL: `${n.app.url}/v1` }, maxRetries: 0, ...fields })
const chatAnthropic = (model: string, fields: Record<string, unknown> = {}) => new ChatAnthropic({ model, apiKey: key, anthropicApiUrl: n.app.url, maxRetries: 0, ...fields })
const chatGemini = (model: string, fields: Record<string, unknown> = {}) => new ChatGoogleGenerativeAI({ model, apiKey: key, baseUrl: n.app.url, maxRetries: 0, ...fields })

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, { name: 'get_weather', description: 'The weather in a city', schema: z.object({ city: z.string() }) })

describe('ChatOpenAI with useResponsesApi: image content blocks', () => {
	// LangChain turns a standard `image` data block into a chat-style `image_url` part on the Responses API
	// (langchain-ai/langchainjs#11248). OpenAI answers 400 "Invalid value: 'image_url'"; the gateway used to drop the
	// part silently for Claude and Gemini models, so the model answered without the image.
	for (const model of MODELS) {
		it(`should refuse a chat-style image_url part with OpenAI's 400 naming the part (${model}), not drop it`, async () => {
			const before = n.anthropic.requests.length + n.gemini.requests.length + n.openai.requests.length
			const image = new HumanMessage({ content: [{ type: 'text', text: 'what is it' }, { type: 'image', source_type: 'base64', mime_type: 'image/png', data: PNG }] })
			const e: any = await chatOpenAI(model, { useResponsesApi: true })
				.invoke([image])
				.catch((err: unknown) => err)
			expect(e?.status).toBe(400)
			expect(e.message).toContain("Invalid value: 'image_url'")
			expect(e.error?.param).toBe('input[0].content[1].type')
			expect(n.anthropic.requests.length + n.gemini.requests.length + n.openai.requests.length).toBe(before)
		})
	}

	it('should see an input_image part from the chat-style image_url block LangChain converts right', async () => {
		for (const model of MODELS) {
			const r = await chatOpenAI(model, { useResponsesApi: true }).invoke([
				new HumanMessage({ content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }),
			])
			expect(r.text).toBe('I see 1 image. Hello! You said: what is it')
		}
	})
})
