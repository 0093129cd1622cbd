import { describe, expect, it } from 'bun:test'
import type { ChatRequest, Message } from '../../../../src/core/ir'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import type { AnthropicRequest } from '../../../../src/protocols/anthropic-messages/model'
import { fixtureJson } from './helpers'

type Body = Record<string, any>
const encode = (req: ChatRequest, model = 'claude-up'): Body => anthropicMessages.encodeRequest(req, model) as Body
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const base: ChatRequest = { model: 'gpt-4o', messages: [user('Hi')], stream: false }
const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }]
const toolTurn: Message[] = [
	user('Weather?'),
	{ role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
	{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: 'sunny' }] }] },
]

describe('anthropicMessages request round trips', () => {
	it('should re-emit adaptive thinking and output_config verbatim to an Anthropic client, without a JSON instruction', () => {
		const schema = { type: 'object' }
		const body = {
			model: 'm',
			max_tokens: 2000,
			thinking: { type: 'adaptive', display: 'summarized' },
			output_config: { effort: 'xhigh', format: { type: 'json_schema', schema } },
			messages: [{ role: 'user', content: 'q' }],
		}
		const req = anthropicMessages.decodeRequest(body as AnthropicRequest)
		expect(req.reasoning).toEqual({ enabled: true, includeThoughts: true, effort: 'high' })
		const out = encode(req)
		expect(out.thinking).toEqual(body.thinking)
		expect(out.output_config).toEqual(body.output_config)
		expect(out.system).toBeUndefined()
		expect(out.max_tokens).toBe(2000)
	})

	it('should round-trip an Anthropic request: encode(decode(x)) keeps every field and block', async () => {
		const original = await fixtureJson<Body>('request-agent.json')
		const req = anthropicMessages.decodeRequest(original as AnthropicRequest)
		const body = encode(req, 'claude-sonnet-4-5')
		expect(body.tools).toEqual(original.tools)
		expect(body.service_tier).toBe('auto')
		expect(body.context_management).toEqual(original.context_management)
		expect(body.thinking).toEqual(original.thinking)
		expect(body.tool_choice).toEqual(original.tool_choice)
		expect(body.system).toEqual(original.system)
		expect(body.metadata).toEqual(original.metadata)
		expect(body.top_p).toBe(0.99)
		expect(body.stop_sequences).toEqual(original.stop_sequences)
		// The only change: string tool_result content is sent in its equivalent block form.
		const expected = structuredClone(original.messages)
		expected[2].content[0].content = [{ type: 'text', text: 'hello world' }]
		expect(body.messages).toEqual(expected)
	})

	it('should decode(encode(x)) back to the same canonical request', () => {
		const req: ChatRequest = {
			...base,
			messages: toolTurn,
			tools,
			toolChoice: { type: 'auto' },
			maxTokens: 2000,
			temperature: 0.4,
			stop: ['x'],
			user: 'u',
			system: [{ type: 'text', text: 'S' }],
		}
		const back = anthropicMessages.decodeRequest(anthropicMessages.encodeRequest(req, 'gpt-4o'))
		const { extra, ...rest } = back
		expect(extra).toEqual({ __protocol: 'anthropic-messages' })
		// Decoding also names each tool result after its call (Gemini's functionResponse needs the name).
		const named: Message = {
			role: 'user',
			content: [{ type: 'tool_result', toolCallId: 'call_1', name: 'get_weather', content: [{ type: 'text', text: 'sunny' }] }],
		}
		expect(rest).toEqual({ ...req, model: 'gpt-4o', messages: [toolTurn[0], toolTurn[1], named] })
	})
})
