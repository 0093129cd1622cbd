/**
 * Chat clients that drop Claude's thinking when they replay a tool call (`@ai-sdk/openai-compatible` as opencode, Qwen
 * Code and Cline use it send back the assistant message with `tool_calls` but without `reasoning_content` /
 * `reasoning_details`): the gateway kept the thinking blocks of the converted answer, by account and call id, and
 * puts them back on the replayed turn, so the agent loop keeps thinking after its first tool call. With thinking on,
 * Anthropic refuses a tool-use turn not led by its thinking block (the mock too), so without them thinking went off.
 * Two instances on one database: the second finds what the first kept; another account replaying the ids gets nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startAnthropicMock, thinkingSignature, type VendorMock } from '../../mocks'
import { type Cluster, type Instance, startCluster } from '../admin/instances'
import { type Answer, chat } from './clients'
import { lastRequest } from './harness'

let anthropic: VendorMock
let cl: Cluster
let a: Instance
let b: Instance
beforeAll(async () => {
	anthropic = await startAnthropicMock({ apiKey: 'up-a' })
	const config: GatewayConfig = {
		channels: [{ name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'up-a', models: ['qa-claude'], model_map: { 'qa-claude': 'claude-sonnet-4-6' } }],
		models: [{ name: 'qa-claude', input_per_mtok: 3, output_per_mtok: 15 }],
	}
	cl = await startCluster(2, config)
	a = cl.nodes[0]!
	b = cl.nodes[1]!
}, 60_000)
afterAll(async () => {
	await cl.close()
	await anthropic.stop()
})

const TOOLS = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
const USER = 'weather please #tools'
const THINKING = `Let me think about ${USER}.`
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

const client = (node: Instance, key: string) => new OpenAI({ apiKey: key, baseURL: `${node.url}/v1`, maxRetries: 0 })
const ask = (c: OpenAI, messages: unknown[], stream: boolean) => chat(c, { model: 'qa-claude', reasoning_effort: 'low', tools: TOOLS, messages } as never, stream)

/** The conversation as such a client replays it: the assistant turn's text and calls, its reasoning left out. */
const dropped = (first: Answer) => [
	{ role: 'user', content: USER },
	{ role: 'assistant', content: first.replay.content ?? null, tool_calls: first.replay.tool_calls },
	...first.calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: ['rain', 'sun'][i] })),
]

/** The assistant turn of the last request Claude received, and its thinking setting. */
function sentToClaude() {
	const body = lastRequest(anthropic).body
	return { thinking: body.thinking, assistant: body.messages.find((x: any) => x.role === 'assistant') }
}

describe('chat clients that drop reasoning_details, on a Claude tool loop', () => {
	for (const stream of [false, true])
		for (const [where, second] of [
			['the same instance', () => a],
			['another instance on the same database', () => b],
		] as const)
			it(`should give Claude its thinking back with thinking on (${stream ? 'stream' : 'JSON'}, second turn on ${where})`, async () => {
				const { key } = await cl.account(5)
				const first = await ask(client(a, key), [{ role: 'user', content: USER }], stream)
				expect(first.reasoning).toBe(THINKING)
				expect(first.calls.map((c) => c.id.startsWith('toolu_'))).toEqual([true, true])

				const next = await ask(client(second(), key), dropped(first), stream)
				const sent = sentToClaude()
				expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
				expect(sent.assistant.content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: thinkingSignature(THINKING) })
				expect(sent.assistant.content.slice(1).map((x: any) => [x.type, x.id])).toEqual(first.calls.map((c) => ['tool_use', c.id]))
				expect(next.text).toBe('Tool results: rain; sun')
				expect(next.reasoning).toBe(THINKING)
			})

	// Cline's read_files of an image: the tool message says "(see following user message for image)" and the image
	// follows as a user message (its split-tool-images middleware). Claude gets that image in the tool results' turn,
	// so the turn before it still needs its thinking.
	it('should give Claude its thinking back when a user message of images follows the tool results (Cline)', async () => {
		const { key } = await cl.account(5)
		const first = await ask(client(a, key), [{ role: 'user', content: USER }], true)
		const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }
		const next = await ask(client(b, key), [...dropped(first), { role: 'user', content: [image] }], true)
		const sent = sentToClaude()
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
		expect(sent.assistant.content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: thinkingSignature(THINKING) })
		expect(lastRequest(anthropic).body.messages.at(-1).content.map((x: any) => x.type)).toEqual(['tool_result', 'tool_result', 'image'])
		expect(next.reasoning).toBe(THINKING)
	})

	it('should leave a turn without its thinking once a user message of text starts a new prompt', async () => {
		const { key } = await cl.account(5)
		const first = await ask(client(a, key), [{ role: 'user', content: USER }], false)
		const history = [...dropped(first), { role: 'assistant', content: 'It rains.' }, { role: 'user', content: 'thanks' }]
		await ask(client(b, key), history, false)
		const sent = sentToClaude()
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
		expect(sent.assistant.content.map((x: any) => x.type)).toEqual(['tool_use', 'tool_use'])
	})

	it("should give another account nothing for the same call ids: its turn goes without thinking, as before", async () => {
		const owner = await cl.account(5)
		const first = await ask(client(a, owner.key), [{ role: 'user', content: USER }], false)
		const other = await cl.account(5)
		for (const node of [a, b]) {
			const next = await ask(client(node, other.key), dropped(first), false)
			const sent = sentToClaude()
			expect(sent.thinking).toBeUndefined()
			expect(sent.assistant.content.map((x: any) => x.type)).toEqual(['tool_use', 'tool_use'])
			expect(next.text).toBe('Tool results: rain; sun')
			expect(next.reasoning).toBe('')
		}
	})

	// The openai SDK's stream helper assigns the delta fields it does not know instead of appending them: its final
	// message holds the last reasoning_content piece only, beside the whole block's signature (QA, chat pass).
	for (const [where, second] of [
		['the same instance', () => a],
		['another instance on the same database', () => b],
	] as const)
		it(`should give Claude its whole thinking back under its signature when the openai SDK's stream helper kept a fragment (second turn on ${where})`, async () => {
			const { key } = await cl.account(5)
			const first = client(a, key).chat.completions.stream({ model: 'qa-claude', reasoning_effort: 'low', tools: TOOLS, messages: [{ role: 'user', content: USER }] })
			const message = (await first.finalChatCompletion()).choices[0]!.message
			const kept = message as typeof message & { reasoning_content?: string }
			expect(kept.reasoning_content).not.toBe(THINKING) // what the helper made of the deltas
			const history = [{ role: 'user', content: USER }, message, ...message.tool_calls!.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: ['rain', 'sun'][i] }))]
			const next = await client(second(), key).chat.completions.create({ model: 'qa-claude', reasoning_effort: 'low', tools: TOOLS, messages: history as never })
			const sent = sentToClaude()
			expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
			expect(sent.assistant.content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: thinkingSignature(THINKING) })
			expect(next.choices[0]!.message.content).toBe('Tool results: rain; sun')
		})

	it('should leave a turn that carries its reasoning_details as the client sent it', async () => {
		const { key } = await cl.account(5)
		const first = await ask(client(a, key), [{ role: 'user', content: USER }], false)
		const history = [{ role: 'user', content: USER }, first.replay, ...first.calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: ['rain', 'sun'][i] }))]
		await ask(client(b, key), history, false)
		const sent = sentToClaude()
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
		expect(sent.assistant.content.map((x: any) => x.type)).toEqual(['thinking', 'tool_use', 'tool_use'])
	})
})
