/**
 * Conversations that reach a Converse model (Amazon Nova on a bedrock channel) with history Converse refuses as sent,
 * through the official SDKs against the Bedrock mock (which validates as Bedrock does): a tool that returned nothing
 * (a blank `toolResult` text is a ValidationException, and the conversation would fail on every later turn), and
 * Anthropic's `redacted_thinking` from a conversation begun with Claude (ciphertext only Anthropic reads). Each turn
 * is answered, and Converse is sent what it takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type BedrockMock, startBedrockMock } from '../../mocks'
import { type Matrix, PRICE, SETUP_MS, startMatrix } from './harness'

const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1oaXN0b3J5'
const NOVA_ID = 'us.amazon.nova-pro-v1:0'
const NOVA = 'nova-history'

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: API_KEY, iam: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }, region: 'us-east-1', models: [NOVA_ID] })
	PRICE[NOVA] = { input: 0.8, output: 3.2 }
	m = await startMatrix({
		models: [{ name: NOVA, input_per_mtok: 0.8, output_per_mtok: 3.2 }],
		channels: () => [{ name: 'br-history', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [NOVA], model_map: { [NOVA]: NOVA_ID } }],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const lastBody = () => br.requests[br.requests.length - 1]!.body as { messages: Array<{ role: string; content: any[] }> }

const TOOL = { type: 'function' as const, function: { name: 'run', parameters: { type: 'object', properties: {} } } }

describe('Converse history the gateway must reshape', () => {
	for (const output of ['', '  \n'])
		for (const stream of [false, true])
			it(`should answer after a tool that returned ${output ? 'only spaces' : 'nothing'} (openai SDK, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const messages = [
					{ role: 'user' as const, content: 'run it' },
					{ role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'run', arguments: '{}' } }] },
					{ role: 'tool' as const, tool_call_id: 'call_1', content: output },
				]
				if (stream) {
					const s = await acct.openai.chat.completions.create({ model: NOVA, messages, tools: [TOOL], stream: true })
					let text = ''
					for await (const c of s) text += c.choices[0]?.delta.content ?? ''
					expect(text).toStartWith('Tool results:')
				} else {
					const r = await acct.openai.chat.completions.create({ model: NOVA, messages, tools: [TOOL] })
					expect(r.choices[0]!.message.content).toStartWith('Tool results:')
				}
				expect(lastBody().messages[2]!.content).toEqual([{ toolResult: { toolUseId: 'call_1', content: [{ text: '(empty)' }] } }])
			})

	it('should answer after an Anthropic tool_result with no content (@anthropic-ai/sdk)', async () => {
		const acct = await m.account()
		const r = await acct.anthropic.messages.create({
			model: NOVA,
			max_tokens: 64,
			tools: [{ name: 'run', input_schema: { type: 'object', properties: {} } }],
			messages: [
				{ role: 'user', content: 'run it' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'run', input: {} }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01' }] },
			],
		})
		expect(r.content[0]).toMatchObject({ type: 'text' })
		expect(lastBody().messages[2]!.content).toEqual([{ toolResult: { toolUseId: 'toolu_01', content: [{ text: '(empty)' }] } }])
	})

	for (const stream of [false, true])
		it(`should leave Claude's redacted_thinking out when the conversation moves to a Converse model (@anthropic-ai/sdk, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = {
				model: NOVA,
				max_tokens: 64,
				messages: [
					{ role: 'user' as const, content: 'first question' },
					{
						role: 'assistant' as const,
						content: [
							{ type: 'redacted_thinking' as const, data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj' },
							{ type: 'text' as const, text: 'first answer' },
						],
					},
					{ role: 'user' as const, content: 'second question' },
				],
			}
			const text = stream
				? (await acct.anthropic.messages.stream(params).finalMessage()).content.map((b) => (b.type === 'text' ? b.text : '')).join('')
				: (await acct.anthropic.messages.create(params)).content.map((b) => (b.type === 'text' ? b.text : '')).join('')
			expect(text).toBe('Hello! You said: second question')
			expect(lastBody().messages[1]).toEqual({ role: 'assistant', content: [{ text: 'first answer' }] })
		})

	// Claude Code's summary turn (compaction) sends the whole tool loop with no tools; Converse refuses toolUse and
	// toolResult blocks without a toolConfig, so the calls and their results go as text the model reads.
	for (const stream of [false, true])
		it(`should answer a conversation that called tools when the request declares none (@anthropic-ai/sdk, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = {
				model: NOVA,
				max_tokens: 64,
				messages: [
					{ role: 'user' as const, content: 'what is in the folder?' },
					{ role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Let me look.' }, { type: 'tool_use' as const, id: 'toolu_07', name: 'list_files', input: { path: '.' } }] },
					{ role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_07', content: 'a.txt b.txt' }] },
					{ role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Two files.' }] },
					{ role: 'user' as const, content: 'summarise this conversation' },
				],
			}
			const r = stream ? await acct.anthropic.messages.stream(params).finalMessage() : await acct.anthropic.messages.create(params)
			expect(r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toBe('Hello! You said: summarise this conversation')
			const sent = lastBody()
			expect((sent as { toolConfig?: unknown }).toolConfig).toBeUndefined()
			expect(sent.messages[1]!.content).toEqual([{ text: 'Let me look.' }, { text: '[called tool list_files with {"path":"."}]' }])
			expect(sent.messages[2]!.content).toEqual([{ text: '[result of list_files: a.txt b.txt]' }])
		})
})
