import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import type { AnthropicRequest } from '../../../../src/protocols/anthropic-messages/model'
import { fixtureJson } from './helpers'

const decode = (body: unknown, opts?: { stream?: boolean }) => anthropicMessages.decodeRequest(body as AnthropicRequest, opts)
const base = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] }

/** Runs a decode that must fail and returns the GatewayError. */
function rejection(body: unknown): GatewayError {
	try {
		decode(body)
	} catch (e) {
		if (e instanceof GatewayError) return e
		throw new Error(`expected a GatewayError, got ${e}`)
	}
	throw new Error('expected the decode to fail')
}

describe('anthropicMessages.decodeRequest', () => {
	it('should decode a minimal request with string content', () => {
		const req = decode(base)
		expect(req.model).toBe('claude-sonnet-4-5')
		expect(req.maxTokens).toBe(1024)
		expect(req.stream).toBe(false)
		expect(req.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }])
		expect(req.extra).toEqual({ __protocol: 'anthropic-messages' })
	})

	it('should let opts.stream override the body', () => {
		expect(decode({ ...base, stream: false }, { stream: true }).stream).toBe(true)
		expect(decode({ ...base, stream: true }).stream).toBe(true)
	})

	it('should keep a budget at or above max_tokens for the upstream to fit (Claude refuses it itself, others take it fitted)', () => {
		const req = decode({ model: 'gemini-2.5-pro', max_tokens: 8192, messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 32000 } })
		expect(req.maxTokens).toBe(8192)
		expect(req.reasoning).toEqual({ enabled: true, budgetTokens: 32000 })
	})

	it('should decode the full agent fixture into canonical slots', async () => {
		const req = decode(await fixtureJson('request-agent.json'))
		expect(req.stream).toBe(true)
		expect(req.system).toEqual([
			{ type: 'text', text: 'You are a coding agent.' },
			{ type: 'text', text: 'Project rules: be concise.', cacheControl: { type: 'ephemeral' } },
		])
		expect(req.user).toBe('user_abc123')
		expect(req.reasoning).toEqual({ enabled: true, budgetTokens: 4000 })
		expect(req.toolChoice).toEqual({ type: 'auto' })
		expect(req.parallelToolCalls).toBe(false)
		expect(req.stop).toEqual(['</done>'])
		expect(req.topP).toBe(0.99)
		expect(req.tools?.map((t) => t.name)).toEqual(['read_file', 'bash'])
		expect(req.tools?.[1].cacheControl).toEqual({ type: 'ephemeral', ttl: '1h' })

		const [user, assistant, results] = req.messages
		expect(user.content).toEqual([
			{ type: 'text', text: 'Summarise this PDF and list the files.' },
			{ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' }, path: 'messages.0.content.1' },
			{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
			{ type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' }, cacheControl: { type: 'ephemeral' } },
		])
		expect(assistant.content).toEqual([
			{ type: 'thinking', text: 'Read the file first.', signature: 'EqQBsig1' },
			{ type: 'redacted_thinking', data: 'EmwKAhgBredacted' },
			{ type: 'text', text: 'Reading.' },
			{ type: 'tool_call', id: 'toolu_01ReadFile', name: 'read_file', input: { path: 'a.txt' } },
			// The Gemini thought signature packed into the id is restored.
			{ type: 'tool_call', id: 'call_9', name: 'bash', input: { cmd: 'ls' }, signature: 'c2lnbmF0dXJl' },
		])
		expect(results.content).toEqual([
			{ type: 'tool_result', toolCallId: 'toolu_01ReadFile', name: 'read_file', content: [{ type: 'text', text: 'hello world' }] },
			{
				type: 'tool_result',
				toolCallId: 'call_9',
				name: 'bash',
				isError: true,
				content: [{ type: 'text', text: 'permission denied' }],
				cacheControl: { type: 'ephemeral' },
			},
			{ type: 'text', text: 'Continue.' },
		])
	})

	it('should keep unknown fields, blocks and server tools in extra with their positions', async () => {
		const { extra } = decode(await fixtureJson('request-agent.json'))
		expect(extra?.__protocol).toBe('anthropic-messages')
		expect(extra?.service_tier).toBe('auto')
		expect(extra?.context_management).toEqual({ edits: [{ type: 'clear_tool_uses_20250919' }] })
		expect(extra?.__tools).toEqual([{ index: 1, tool: { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } }])
		expect(extra?.__toolFields).toEqual({ bash: { defer_loading: false } })
		const blocks = extra?.__blocks as Array<{ path: number[]; block: { type: string } }>
		// Documents are canonical file parts now (so other vendors get them); search results stay verbatim.
		expect(blocks.map((b) => [b.path, b.block.type])).toEqual([[[2, 1, 1], 'search_result']])
	})

	it('should map tool_choice any to required and tool to a named choice', () => {
		const tools = [{ name: 'f', input_schema: { type: 'object' } }]
		expect(decode({ ...base, tools, tool_choice: { type: 'any' } }).toolChoice).toEqual({ type: 'required' })
		expect(decode({ ...base, tools, tool_choice: { type: 'none' } }).toolChoice).toEqual({ type: 'none' })
		expect(decode({ ...base, tools, tool_choice: { type: 'tool', name: 'f' } }).toolChoice).toEqual({ type: 'tool', name: 'f' })
	})

	it('should decode thinking disabled, adaptive and display', () => {
		expect(decode({ ...base, thinking: { type: 'disabled' } }).reasoning).toEqual({ enabled: false })
		const adaptive = decode({ ...base, thinking: { type: 'adaptive', display: 'omitted' } })
		expect(adaptive.reasoning).toEqual({ enabled: true, includeThoughts: false })
		expect(adaptive.extra?.__thinking).toEqual({ type: 'adaptive', display: 'omitted' })
	})

	it('should fold leading system-role messages into the system prompt', () => {
		const req = decode({ ...base, system: 'A', messages: [{ role: 'system', content: 'B' }, ...base.messages] })
		expect(req.system).toEqual([
			{ type: 'text', text: 'A' },
			{ type: 'text', text: 'B' },
		])
		expect(req.messages).toHaveLength(1)
	})

	it('should fold a mid-conversation system message (Claude Code sends one after its first user turn) into the system prompt', () => {
		const req = decode({ ...base, system: 'A', messages: [...base.messages, { role: 'system', content: [{ type: 'text', text: 'late' }] }] })
		expect(req.system).toEqual([
			{ type: 'text', text: 'A' },
			{ type: 'text', text: 'late' },
		])
		expect(req.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }])
	})

	it('should decode output_config.format as a json_schema response format and keep output_config', () => {
		const schema = { type: 'object', properties: { a: { type: 'string' } } }
		const req = decode({ ...base, output_config: { format: { type: 'json_schema', schema } } })
		expect(req.responseFormat).toEqual({ type: 'json_schema', name: 'response', schema, enforced: true })
		expect(req.extra?.output_config).toEqual({ format: { type: 'json_schema', schema } })
	})

	it('should decode sampling parameters and metadata', () => {
		const req = decode({ ...base, temperature: 0.3, top_k: 40, metadata: { user_id: 'u1', tag: 'x' } })
		expect(req.temperature).toBe(0.3)
		expect(req.topK).toBe(40)
		expect(req.user).toBe('u1')
		expect(req.extra?.metadata).toEqual({ tag: 'x' })
	})

	it.each([
		[{ model: 'm', messages: base.messages }, 'max_tokens: Field required', 'max_tokens'],
		[{ ...base, max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1', 'max_tokens'],
		[{ max_tokens: 10, messages: base.messages }, 'model: Field required', 'model'],
		[{ model: 'm', max_tokens: 10 }, 'messages: Field required', 'messages'],
		[{ ...base, messages: [] }, 'messages: List should have at least 1 item', 'messages'],
		[{ ...base, messages: [{ role: 'tool', content: 'x' }] }, "messages.0.role: Input should be 'user' or 'assistant'", 'messages.0.role'],
		[{ ...base, messages: [{ role: 'user' }] }, 'messages.0.content: Field required', 'messages.0.content'],
		[
			{ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] },
			'messages.0.content.0.tool_use_id: Field required',
			'messages.0.content.0.tool_use_id',
		],
		[
			{ ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] },
			'messages.0.content.0: `tool_use` blocks are only allowed in `assistant` messages',
			'messages.0.content.0',
		],
		[
			{ ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'b' }] }] },
			'messages.0.content.0.input: Field required',
			'messages.0.content.0.input',
		],
		[
			{
				...base,
				messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }] }],
			},
			"messages.0.content.0.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
			'messages.0.content.0.source.media_type',
		],
		[{ ...base, temperature: 1.5 }, 'temperature: Input should be less than or equal to 1', 'temperature'],
		[{ ...base, max_tokens: 1.5 }, 'max_tokens: Input should be a valid integer', 'max_tokens'],
		[
			{ ...base, thinking: { type: 'enabled', budget_tokens: 512 } },
			'thinking.budget_tokens: Input should be greater than or equal to 1024',
			'thinking.budget_tokens',
		],
		[{ ...base, tools: [{ name: 'f' }] }, 'tools.0.input_schema: Field required', 'tools.0.input_schema'],
		[
			{ ...base, tools: [{ name: 'f', input_schema: { type: 'string' } }] },
			"tools.0.input_schema.type: Input should be 'object'",
			'tools.0.input_schema.type',
		],
		[
			{ ...base, tool_choice: { type: 'sometimes' } },
			"tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'",
			'tool_choice.type',
		],
		[{ ...base, tool_choice: { type: 'tool' } }, 'tool_choice.name: Field required', 'tool_choice.name'],
		[{ ...base, system: [{ type: 'image' }] }, "system.0.type: Input should be 'text'", 'system.0.type'],
	])('should reject %j with a 400 naming the field', (body, message, param) => {
		const err = rejection(body)
		expect(err.kind).toBe('invalid_request')
		expect(err.status).toBe(400)
		expect(err.message).toBe(message)
		expect(err.param).toBe(param)
	})

	it('should answer odd input with a 400, never a TypeError', () => {
		const odd: unknown[] = [
			null,
			'text',
			[],
			{ ...base, messages: 'Hi' },
			{ ...base, messages: [null] },
			{ ...base, messages: [{ role: 'user', content: [null] }] },
			{ ...base, messages: [{ role: 'user', content: [{ type: 5 }] }] },
			{ ...base, messages: [{ role: 'user', content: 7 }] },
			{ ...base, messages: [{ role: 'user', content: [{ type: 'image' }] }] },
			{ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { data: 'x' } }] }] },
			{ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 5 }] }] },
			{ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'forever' } }] }] },
			{ ...base, tools: 'all' },
			{ ...base, tools: [null] },
			{ ...base, tool_choice: 'auto' },
			{ ...base, thinking: { type: 'enabled' } },
			{ ...base, stop_sequences: [1] },
			{ ...base, metadata: { user_id: 5 } },
			{ ...base, output_config: 'json' },
		]
		for (const body of odd) expect(rejection(body).status).toBe(400)
	})
})
