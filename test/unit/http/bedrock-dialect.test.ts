/** Anthropic's SSE framed as Bedrock streams it (http/bedrock-dialect.ts `asEventStream`), read back with the gateway's decoder. */
import { describe, expect, it } from 'bun:test'
import { asEventStream, bedrockCall } from '../../../src/http/bedrock-dialect'
import { eventMessages } from '../../../src/providers/aws/event-stream'

const sse = (text: string) => new Response(text, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } })

describe('asEventStream', () => {
	it('should frame each event as a chunk, drop keepalives, and turn an error event into its Bedrock exception', async () => {
		const res = asEventStream(
			sse(
				'event: message_start\ndata: {"type":"message_start"}\n\n: keepalive\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
			),
		)
		const got = []
		for await (const m of eventMessages(res.body!.getReader())) got.push({ headers: m.headers, payload: JSON.parse(new TextDecoder().decode(m.payload)) })
		expect(got).toEqual([
			{ headers: { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, payload: { bytes: Buffer.from('{"type":"message_start"}').toString('base64') } },
			{ headers: { ':exception-type': 'serviceUnavailableException', ':content-type': 'application/json', ':message-type': 'exception' }, payload: { message: 'Overloaded' } },
		])
	})

	it('should leave a JSON answer as it is', async () => {
		const json = Response.json({ type: 'error' }, { status: 404 })
		expect(asEventStream(json)).toBe(json)
	})
})

describe('bedrockCall', () => {
	it("should read the model and mode from Bedrock's paths only", () => {
		expect(bedrockCall('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream')).toEqual({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', stream: true })
		expect(bedrockCall('/model/claude/invoke')).toEqual({ model: 'claude', stream: false })
		expect(bedrockCall('/model/claude/converse')).toBeUndefined()
	})
})
