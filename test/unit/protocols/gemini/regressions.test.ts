/** One named test per WIRE-NOTES bug that concerns the Gemini protocol. */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatRequest, Message } from '../../../../src/core/ir'
import { packToolCallId, unpackToolCallId } from '../../../../src/core/tool-ids'
import { gemini } from '../../../../src/protocols/gemini'
import { checkInvariants, collect, fixtureFrames } from './helpers'

const decodeFixture = async (name: string): Promise<StreamEvent[]> => {
	const events = await collect(gemini.decodeStream(fixtureFrames(name)))
	checkInvariants(events)
	return events
}

describe('gemini regressions', () => {
	it('should emit the whole functionCall.args as one json_delta (BerriAI/litellm#25561)', async () => {
		const events = await decodeFixture('tool-stop-later.sse')
		const json = events.filter((e) => e.type === 'json_delta')
		expect(json).toEqual([{ type: 'json_delta', index: 1, json: '{"order_id":"A-17","include":["items","status"]}' }])
	})

	it('should end with tool_use when STOP arrives in a later chunk than the functionCall (litellm PR #10485, WIRE §6)', async () => {
		const events = await decodeFixture('tool-stop-later.sse')
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should not open an empty text block and derive the stop reason from the blocks (BerriAI/litellm#34692)', async () => {
		const events = await decodeFixture('parallel-tools.sse')
		expect(events.some((e) => e.type === 'block_start' && e.block.kind === 'text')).toBe(false)
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should carry a Gemini thought signature through an OpenAI/Anthropic client and back (theopenco/llmgateway#1267)', async () => {
		const events = await decodeFixture('thinking-tool.sse')
		const start = events.find((e) => e.type === 'block_start' && e.block.kind === 'tool_call')
		if (start?.type !== 'block_start' || start.block.kind !== 'tool_call') throw new Error('no tool call')
		// What an OpenAI/Anthropic encoder sends the client, and what comes back in the next turn.
		const clientId = packToolCallId(start.block.id, start.block.signature)
		for (const id of [clientId, unpackToolCallId(clientId).id]) {
			const signature = id === clientId ? undefined : unpackToolCallId(clientId).signature
			const messages: Message[] = [
				{ role: 'user', content: [{ type: 'text', text: 'Weather in Tokyo?' }] },
				{ role: 'assistant', content: [{ type: 'tool_call', id, name: start.block.name, input: { city: 'Tokyo' }, ...(signature ? { signature } : {}) }] },
				{ role: 'user', content: [{ type: 'tool_result', toolCallId: unpackToolCallId(clientId).id, content: [{ type: 'text', text: 'rain' }] }] },
			]
			const body = gemini.encodeRequest({ model: 'm', stream: true, messages }, 'gemini-3-pro-preview')
			expect(body.contents[1].parts[0]).toEqual({
				functionCall: { name: 'get_weather', args: { city: 'Tokyo' } },
				thoughtSignature: 'Q2lRQmp6MXJYMFNpZ1Rvb2w=',
			})
			expect(body.contents[2].parts[0].functionResponse?.name).toBe('get_weather')
		}
	})

	it('should count thoughtsTokenCount as output and reasoning (Wei-Shaw/sub2api#554)', async () => {
		const events = await decodeFixture('thinking.sse')
		const usage = events.filter((e) => e.type === 'usage').at(-1)
		expect(usage).toEqual({ type: 'usage', usage: { input: 12, output: 47, cacheRead: 0, cacheWrite: 0, reasoning: 40 } })
	})

	it('should subtract cached tokens from promptTokenCount (candelahq/candela PR #206)', () => {
		const usage = gemini.usageOf({ usageMetadata: { promptTokenCount: 1000, cachedContentTokenCount: 800, candidatesTokenCount: 10 } })
		expect(usage).toEqual({ input: 200, cacheRead: 800, cacheWrite: 0, output: 10, reasoning: 0 })
	})

	it('should report the same usage streaming and non-streaming (QuantumNous/new-api#6144)', async () => {
		const events = await decodeFixture('usage-cache.sse')
		const streamed = events.filter((e) => e.type === 'usage').at(-1)
		const whole = gemini.decodeResponse({
			candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }],
			usageMetadata: { promptTokenCount: 12050, cachedContentTokenCount: 12000, candidatesTokenCount: 9, thoughtsTokenCount: 21, totalTokenCount: 12080 },
		})
		expect(streamed?.type === 'usage' && streamed.usage).toEqual(whole.usage)
	})

	it('should sanitise tool schemas Gemini rejects with 400 Invalid JSON payload (router-for-me/CLIProxyAPI#97, WIRE §11)', () => {
		const req: ChatRequest = {
			model: 'm',
			stream: false,
			messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
			tools: [
				{
					name: 'edit',
					parameters: {
						$schema: 'https://json-schema.org/draft/2020-12/schema',
						type: 'object',
						properties: { path: { type: 'string' }, mode: { type: ['string', 'null'], const: 'w' }, meta: { type: 'object', propertyNames: { pattern: 'x' } } },
						required: ['path'],
						additionalProperties: false,
					},
				},
			],
		}
		const params = gemini.encodeRequest(req, 'm').tools?.[0].functionDeclarations?.[0].parameters
		expect(JSON.stringify(params)).not.toMatch(/\$schema|additionalProperties|propertyNames|const|\["string","null"\]/)
		expect(params).toEqual({
			type: 'object',
			properties: { path: { type: 'string' }, mode: { type: 'string', enum: ['w'], nullable: true }, meta: { type: 'object' } },
			required: ['path'],
		})
	})

	it('should wrap a string tool result in an object for functionResponse.response (WIRE §9)', () => {
		const body = gemini.encodeRequest(
			{
				model: 'm',
				stream: false,
				messages: [
					{ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', input: {} }] },
					{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'c', content: [{ type: 'text', text: 'plain text' }] }] },
				],
			},
			'm',
		)
		expect(body.contents[1].parts[0].functionResponse?.response).toEqual({ result: 'plain text' })
	})

	it('should surface a mid-stream upstream error instead of swallowing it (Portkey-AI/gateway#1142)', async () => {
		const events = await decodeFixture('error-mid.sse')
		expect(events.at(-1)?.type).toBe('error')
	})
})
