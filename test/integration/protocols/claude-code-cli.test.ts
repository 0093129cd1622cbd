/**
 * Claude Code 2.1 as it was seen on the wire, pointed at the gateway with a GPT, Gemini or Claude model: the request
 * shape its `claude -p` sends (through `client.beta.messages`, so `?beta=true`), which agent-shape.ts predates: a
 * `role: "system"` message after the first user turn (the `mid-conversation-system-2026-04-07` beta), adaptive
 * thinking with `output_config.effort`, `context_management`, and `metadata.user_id` as a 150-character JSON object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { countWords } from '../../mocks'
import { expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, THINKER_UPSTREAM, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const HEADERS = {
	'anthropic-beta':
		'claude-code-20250219,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24',
	'x-app': 'cli',
	'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
}
const SYSTEM = [
	{ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197.092; cc_entrypoint=sdk-cli;' },
	{ type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK.", cache_control: { type: 'ephemeral' } },
	{ type: 'text', text: 'You are an interactive agent that helps users with software engineering tasks.', cache_control: { type: 'ephemeral' } },
]
const REMINDER = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# currentDate\nToday's date is 2026-11-29.\n</system-reminder>\n"
const ASK = 'What is two plus two?'
const AGENTS = 'Available agent types for the Agent tool:\n- Explore: Read-only search agent for broad fan-out searches.'
const USER_ID = JSON.stringify({ device_id: '169ab6b40ea7a1d024c321dcb33371cd0d1d59ad558d92fbcb3b57facaac0602', account_uuid: '', session_id: '059ef76f-097c-4c16-b1b0-8585226c4beb' })
const TOOLS = [
	{
		name: 'Read',
		description: 'Reads a file from the local filesystem.',
		input_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'], additionalProperties: false },
	},
]

const body = (model: string) => ({
	model,
	max_tokens: 32000,
	thinking: { type: 'adaptive' },
	context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
	metadata: { user_id: USER_ID },
	output_config: { effort: 'high' },
	stream: true,
	system: SYSTEM,
	messages: [
		{ role: 'user', content: [{ type: 'text', text: REMINDER }, { type: 'text', text: ASK, cache_control: { type: 'ephemeral' } }] },
		{ role: 'system', content: AGENTS },
	],
	tools: TOOLS,
})

describe('Claude Code 2.1 (claude -p) through /v1/messages?beta=true', () => {
	for (const up of UPSTREAMS)
		it(`should answer its first turn, system message after the user turn and long user id included, from ${up}`, async () => {
			const acct = await m.account()
			const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: HEADERS })
			const stream = await client.beta.messages.create(body(MODEL[up]) as never)
			let text = ''
			let stop: string | null = null
			for await (const e of stream as unknown as AsyncIterable<any>) {
				if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
				if (e.type === 'message_delta') stop = e.delta.stop_reason
			}
			expect(text).toBe(`Hello! You said: ${REMINDER} ${ASK}`)
			expect(stop).toBe('end_turn')

			const sent = lastRequest(m.mocks[up])
			if (up === 'openai') {
				// OpenAI refuses a `user` past 64 characters: the id goes as its sha256, one stable id per end user.
				expect(sent.body.user).toBe(new Bun.CryptoHasher('sha256').update(USER_ID).digest('hex'))
				expect(sent.body.messages[0]).toEqual({ role: 'system', content: expect.stringContaining(AGENTS) })
				// gpt-4o-mini does not reason and refuses reasoning_effort (OpenAI's 400): it answers without thinking.
				expect('reasoning_effort' in sent.body).toBe(false)
			} else if (up === 'gemini') {
				expect(sent.body.systemInstruction.parts.map((p: { text: string }) => p.text)).toContain(AGENTS)
			} else {
				// Anthropic takes it where it stands (the fast path sends the body as written).
				expect(sent.body.messages[1]).toEqual({ role: 'system', content: AGENTS })
			}
			const input = [...SYSTEM.map((s) => s.text), REMINDER, ASK, AGENTS].reduce((n, t) => n + countWords(t), 0)
			const thinking = up === 'openai' ? 0 : countWords(`Let me think about ${REMINDER} ${ASK}.`)
			await expectCharges(m, acct, [{ model: MODEL[up], input, output: thinking + countWords(text), reasoning: thinking, stream: true }])
		})

	it('should ask an OpenAI reasoning model (o4-mini) for its effort, and give its reasoning as thinking', async () => {
		const acct = await m.account()
		const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: HEADERS })
		const stream = await client.beta.messages.create(body(THINKER.openai) as never)
		let thinking = ''
		let text = ''
		for await (const e of stream as unknown as AsyncIterable<any>) {
			if (e.type === 'content_block_delta' && e.delta.type === 'thinking_delta') thinking += e.delta.thinking
			if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
		}
		expect(thinking).toBe(`Let me think about ${REMINDER} ${ASK}.`)
		expect(text).toBe(`Hello! You said: ${REMINDER} ${ASK}`)
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.model, sent.reasoning_effort, sent.max_completion_tokens]).toEqual([THINKER_UPSTREAM, 'high', 32000])
		const input = [...SYSTEM.map((s) => s.text), REMINDER, ASK, AGENTS].reduce((n, t) => n + countWords(t), 0)
		await expectCharges(m, acct, [{ model: THINKER.openai, input, output: countWords(thinking) + countWords(text), reasoning: countWords(thinking), stream: true }])
	})

	it("should leave out sampling settings an OpenAI reasoning model refuses (Anthropic and Gemini clients set them)", async () => {
		const acct = await m.account()
		// Cline and Roo send temperature 0 to every model; OpenAI's reasoning models answer 400 "Unsupported parameter".
		// (This SDK's types no longer name temperature and top_p; the API still takes them.)
		const a = await acct.anthropic.messages.create({ model: THINKER.openai, max_tokens: 64, temperature: 0, top_p: 0.5, messages: [{ role: 'user', content: ASK }] } as never)
		expect(a.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual([`Hello! You said: ${ASK}`])
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.model, sent.temperature, sent.top_p]).toEqual([THINKER_UPSTREAM, undefined, undefined])
		const res = await fetch(`${m.app.url}/v1beta/models/${THINKER.openai}:generateContent`, {
			method: 'POST',
			headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' },
			body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: ASK }] }], generationConfig: { temperature: 0.3, topP: 0.9, presencePenalty: 0.5, frequencyPenalty: 0.5 } }),
		})
		expect(res.status).toBe(200)
		const g = lastRequest(m.mocks.openai).body
		for (const k of ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty']) expect(k in g).toBe(false)
		// A model that samples keeps them.
		await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 64, temperature: 0, messages: [{ role: 'user', content: ASK }] } as never)
		expect(lastRequest(m.mocks.openai).body.temperature).toBe(0)
	})
})
