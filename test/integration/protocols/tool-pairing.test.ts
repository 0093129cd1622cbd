/**
 * A conversation whose tool calls and results do not pair up, sent to another vendor's model: refused 400 as the
 * client's own vendor words it, with the client's indices, before any upstream call and without a charge. Before, the
 * other vendor's refusal came through: an OpenAI client calling Claude read "messages.1: `tool_use` ids were found
 * without `tool_result` blocks", naming blocks it never sent at an index its own list does not have (the system
 * message goes top level). The same vendor's own refusal still comes from the vendor (the fast path is untouched).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { type Content, GoogleGenAI } from '@google/genai'
import type OpenAI from 'openai'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
const CALL = { id: 'call_w1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }

/** The upstream requests each mock received, to tell whether any was called. */
const sent = () => (['openai', 'anthropic', 'gemini'] as Upstream[]).map((u) => m.mocks[u].requests.length)

async function refusal(acct: Account, call: () => Promise<unknown>) {
	const before = sent()
	const err: any = await call().then(
		() => undefined,
		(e) => e,
	)
	expect(err).toBeDefined()
	await m.app.svc.ledger.flush()
	expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	expect(sent()).toEqual(before)
	return err
}

describe('an OpenAI chat client calling another vendor', () => {
	const missing: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
		{ role: 'system', content: 'Be brief.' },
		{ role: 'user', content: 'Weather in Paris?' },
		{ role: 'assistant', content: null, tool_calls: [CALL] },
		{ role: 'user', content: 'And tomorrow?' },
	]
	const orphan: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
		{ role: 'system', content: 'Be brief.' },
		{ role: 'user', content: 'Weather in Paris?' },
		{ role: 'tool', tool_call_id: 'call_w1', content: '18°C' },
	]
	for (const up of ['anthropic', 'gemini'] as const)
		for (const stream of [false, true]) {
			it(`should be told of an unanswered tool call in OpenAI's words (${up}, ${stream ? 'stream' : 'json'})`, async () => {
				const acct = await m.account()
				const err = await refusal(acct, () => acct.openai.chat.completions.create({ model: MODEL[up], messages: missing, tools: TOOLS, stream }))
				expect(err.status).toBe(400)
				expect(err.error).toMatchObject({
					type: 'invalid_request_error',
					param: 'messages.[2].role',
					message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_w1",
				})
			})
			it(`should be told of a tool message answering no call in OpenAI's words (${up}, ${stream ? 'stream' : 'json'})`, async () => {
				const acct = await m.account()
				const err = await refusal(acct, () => acct.openai.chat.completions.create({ model: MODEL[up], messages: orphan, tools: TOOLS, stream }))
				expect(err.status).toBe(400)
				expect(err.error).toMatchObject({ param: 'messages.[2].role', message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'." })
			})
		}
	it('should name a tool_call_id the calls before do not have', async () => {
		const acct = await m.account()
		const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
			{ role: 'user', content: 'Weather in Paris?' },
			{ role: 'assistant', content: null, tool_calls: [CALL] },
			{ role: 'tool', tool_call_id: 'call_w1', content: '18°C' },
			{ role: 'tool', tool_call_id: 'call_zz', content: '19°C' },
		]
		const err = await refusal(acct, () => acct.openai.chat.completions.create({ model: MODEL.anthropic, messages, tools: TOOLS }))
		expect(err.error).toMatchObject({ param: 'messages.[3].tool_call_id', message: "Invalid parameter: 'tool_call_id' of 'call_zz' not found in 'tool_calls' of previous message." })
	})
	it('should still pass a conversation that pairs up, and one ending with the calls, to the vendor', async () => {
		const acct = await m.account()
		const ok = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [...missing.slice(0, 3), { role: 'tool', tool_call_id: 'call_w1', content: '18°C' }], tools: TOOLS })
		expect(ok.choices[0]!.message).toBeDefined()
		// The last message's calls are the vendor's to judge: Claude takes them.
		const before = m.mocks.anthropic.requests.length
		await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: missing.slice(0, 3), tools: TOOLS }).catch(() => undefined)
		expect(m.mocks.anthropic.requests.length).toBe(before + 1)
	})
	it("should leave the same vendor's refusal to the vendor (the fast path)", async () => {
		const acct = await m.account()
		const before = m.mocks.openai.requests.length
		const err: any = await acct.openai.chat.completions.create({ model: MODEL.openai, messages: missing, tools: TOOLS }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(m.mocks.openai.requests.length).toBe(before + 1)
	})
})

describe('an Anthropic client calling another vendor', () => {
	const use: Anthropic.ToolUseBlockParam = { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } }
	const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]
	for (const up of ['openai', 'gemini'] as const)
		for (const stream of [false, true]) {
			it(`should be told of a tool_use without its result in Anthropic's words (${up}, ${stream ? 'stream' : 'json'})`, async () => {
				const acct = await m.account()
				const messages: Anthropic.MessageParam[] = [
					{ role: 'user', content: 'Weather in Paris?' },
					{ role: 'assistant', content: [use] },
					{ role: 'user', content: 'And tomorrow?' },
				]
				const err = await refusal(acct, () => acct.anthropic.messages.create({ model: MODEL[up], max_tokens: 50, system: 'Be brief.', messages, tools, stream }))
				expect(err.status).toBe(400)
				expect(err.error).toMatchObject({
					type: 'error',
					error: {
						type: 'invalid_request_error',
						message: 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_w1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
					},
				})
			})
		}
	it("should be told of a tool_result answering no tool_use in Anthropic's words, at the block's own index", async () => {
		const acct = await m.account()
		const messages: Anthropic.MessageParam[] = [
			{ role: 'user', content: 'Weather in Paris?' },
			{ role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, use] },
			{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w1', content: '18°C' }, { type: 'tool_result', tool_use_id: 'toolu_zz', content: '19°C' }] },
		]
		const err = await refusal(acct, () => acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 50, messages, tools }))
		expect(err.status).toBe(400)
		expect(err.error.error.message).toBe(
			'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zz. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
		)
	})
	// count_tokens refuses what /v1/messages refuses: before, an OpenAI model's was counted (200) and a Gemini model's
	// refused in the gateway's words ("tool result toolu_zz has no matching tool call: Gemini needs the function name").
	for (const up of ['openai', 'gemini', 'anthropic'] as const)
		it(`should be told of it by count_tokens as by messages, before any count upstream (${up})`, async () => {
			const acct = await m.account()
			const messages: Anthropic.MessageParam[] = [
				{ role: 'user', content: 'a' },
				{ role: 'assistant', content: 'b' },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_zz', content: 'x' }] },
			]
			const err = await refusal(acct, () => acct.anthropic.messages.countTokens({ model: MODEL[up], messages }))
			expect(err.status).toBe(400)
			expect(err.error).toMatchObject({
				type: 'error',
				error: {
					type: 'invalid_request_error',
					message: 'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zz. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
				},
			})
		})
})

describe('a Gemini client calling another vendor', () => {
	const contents: Content[] = [
		{ role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
		{ role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_weather', args: { city: 'Rome' } } }] },
		{ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 18 } } }] },
	]
	for (const up of ['openai', 'anthropic'] as const) {
		it(`should take the two responses in two contents of their own, as LangChain sends them (${up})`, async () => {
			const acct = await m.account()
			const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
			const split: Content[] = [...contents, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] }]
			const before = m.mocks[up].requests.length
			const r = await ai.models.generateContent({ model: MODEL[up], contents: split, config: { tools: [{ functionDeclarations: [{ name: 'get_weather' }] }] } })
			expect(r.text).toStartWith('Tool results:')
			expect(m.mocks[up].requests.length).toBe(before + 1)
		})
		it(`should be told of a turn answering two calls with one response in Gemini's words (${up})`, async () => {
			const acct = await m.account()
			const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
			const err = await refusal(acct, () => ai.models.generateContent({ model: MODEL[up], contents, config: { tools: [{ functionDeclarations: [{ name: 'get_weather' }] }] } }))
			expect(err.status).toBe(400)
			expect(JSON.parse(err.message)).toMatchObject({
				error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.' },
			})
		})
	}
})

describe('a Responses client calling another vendor', () => {
	const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }]
	const call: OpenAI.Responses.ResponseFunctionToolCall = { type: 'function_call', call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }
	const output: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = { type: 'function_call_output', call_id: 'call_w1', output: '18°C' }
	const ask = (text: string): OpenAI.Responses.EasyInputMessage => ({ role: 'user', content: text })
	for (const up of ['anthropic', 'gemini'] as const)
		for (const stream of [false, true]) {
			it(`should be told of a call no output answers in OpenAI's words (${up}, ${stream ? 'stream' : 'json'})`, async () => {
				const acct = await m.account()
				const err = await refusal(acct, () => acct.openai.responses.create({ model: MODEL[up], input: [ask('Weather in Paris?'), call, ask('And tomorrow?')], tools, stream }))
				expect(err.status).toBe(400)
				expect(err.error).toEqual({ type: 'invalid_request_error', param: 'input', code: null, message: 'No tool output found for function call call_w1.' })
			})
			it(`should be told of an output answering no call in OpenAI's words (${up}, ${stream ? 'stream' : 'json'})`, async () => {
				const acct = await m.account()
				const err = await refusal(acct, () => acct.openai.responses.create({ model: MODEL[up], input: [ask('Weather in Paris?'), output], tools, stream }))
				expect(err.status).toBe(400)
				expect(err.error).toEqual({ type: 'invalid_request_error', param: 'input', code: null, message: 'No tool call found for function call output with call_id call_w1.' })
			})
		}
	it('should name a custom tool call by its kind', async () => {
		const acct = await m.account()
		const input: OpenAI.Responses.ResponseInput = [ask('Patch it'), { type: 'custom_tool_call', call_id: 'call_c1', name: 'patch', input: '*** Begin Patch' }, ask('Well?')]
		const err = await refusal(acct, () => acct.openai.responses.create({ model: MODEL.anthropic, input, tools: [{ type: 'custom', name: 'patch' }] }))
		expect(err.error).toMatchObject({ param: 'input', message: 'No tool output found for custom tool call call_c1.' })
	})
	it('should pass calls answered in any order, interleaved as Codex records them, and calls ending the input, to the vendor', async () => {
		const acct = await m.account()
		const first = await acct.openai.responses.create({ model: MODEL.anthropic, input: 'Weather in Paris and Tokyo? #tools', tools, store: false })
		const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
		expect(calls.length).toBe(2)
		const interleaved = calls.flatMap((c) => [c, { type: 'function_call_output' as const, call_id: c.call_id, output: '18°C' }])
		const before = m.mocks.anthropic.requests.length
		const ok = await acct.openai.responses.create({ model: MODEL.anthropic, input: [ask('Weather in Paris and Tokyo? #tools'), ...interleaved], tools, store: false })
		expect(ok.status).toBe('completed')
		// The last step's calls are the vendor's to judge, as on the other protocols.
		await acct.openai.responses.create({ model: MODEL.anthropic, input: [ask('Weather in Paris and Tokyo?'), ...calls], tools, store: false }).catch(() => undefined)
		expect(m.mocks.anthropic.requests.length).toBe(before + 2)
	})
	for (const up of ['anthropic', 'gemini'] as const)
		it(`should take outputs given before their calls, as OpenAI does, sending each result after its call (${up})`, async () => {
			const acct = await m.account()
			const first = await acct.openai.responses.create({ model: MODEL[up], input: 'Weather in Paris and Tokyo? #tools', tools, store: false })
			const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
			expect(calls.length).toBe(2)
			const outputs = calls.map((c, i) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `${18 + i}°C` }))
			const ok = await acct.openai.responses.create({ model: MODEL[up], input: [ask('Weather in Paris and Tokyo?'), ...outputs.reverse(), ...calls], tools, store: false })
			expect(ok.output_text).toStartWith('Tool results:')
			const sent = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') {
				expect(sent.messages.map((x: any) => [x.role, x.content.map((b: any) => b.type)])).toEqual([
					['user', ['text']],
					['assistant', ['tool_use', 'tool_use']],
					['user', ['tool_result', 'tool_result']],
				])
			} else {
				expect(sent.contents.map((x: any) => [x.role, x.parts.map((p: any) => Object.keys(p).find((k) => k !== 'thoughtSignature'))])).toEqual([
					['user', ['text']],
					['model', ['functionCall', 'functionCall']],
					['user', ['functionResponse', 'functionResponse']],
				])
			}
		})
	it('should check the input a converted previous_response_id expands to', async () => {
		const acct = await m.account()
		const first = await acct.openai.responses.create({ model: MODEL.gemini, input: 'Weather in Paris and Tokyo? #tools', tools })
		const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
		expect(calls.length).toBe(2)
		const answer = (c: OpenAI.Responses.ResponseFunctionToolCall) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: '18°C' })
		await m.app.svc.ledger.flush()
		const charged = { ...acct, balance: await m.app.balance(acct.accountId) }
		// One call answered, then a question: the other call's output is missing from the expanded input.
		const err = await refusal(charged, () => acct.openai.responses.create({ model: MODEL.gemini, previous_response_id: first.id, input: [answer(calls[0]!), ask('Well?')], tools }))
		expect(err.error).toMatchObject({ param: 'input', message: `No tool output found for function call ${calls[1]!.call_id}.` })
		const ok = await acct.openai.responses.create({ model: MODEL.gemini, previous_response_id: first.id, input: calls.map(answer), tools })
		expect(ok.status).toBe('completed')
	})
	it("should leave the same vendor's refusal to the vendor (an OpenAI channel takes the body verbatim)", async () => {
		const acct = await m.account()
		const before = m.mocks.openai.requests.length
		const err: any = await acct.openai.responses.create({ model: MODEL.openai, input: [ask('Weather in Paris?'), output], tools }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(m.mocks.openai.requests.length).toBe(before + 1)
	})
})
