/**
 * A converted answer reaches a Responses client as the same output items whether streamed or not. OpenAI gives a run of
 * text as one `message` item with one `output_text` part, its `url_citation` annotations spanning that part's text (the
 * web search guide's answers: https://platform.openai.com/docs/guides/tools-web-search), and a message never holds a
 * call: text, a function call and more text are three items. Claude splits its text into blocks (each cited claim a block
 * of its own), so the stream continues one message across them instead of opening an item per block, and its final
 * `response.completed` lists what the whole answer lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { MODEL, type Matrix, SETUP_MS, startMatrix } from './harness'
import { checkResponsesEvents } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

/**
 * Output items with their fresh ids reduced to their prefixes, to compare two answers' shapes; without the `parsed` and
 * `parsed_arguments` fields the SDK's stream helper adds.
 */
const shape = (output: unknown[]) => JSON.parse(JSON.stringify(output, (k, v) => (k === 'parsed' || k === 'parsed_arguments' ? undefined : v)).replace(/"(msg|ws|fc|rs)_[A-Za-z0-9_-]+"/g, '"$1_*"'))

describe('Responses client, Claude answer of several text blocks', () => {
	it('should stream one message item with one output_text part, as the whole answer gives it', async () => {
		const acct = await m.account()
		// The mock's Claude answers `#cited-tail` in two text blocks: the uncited words, then the cited tail.
		const ask = 'café 😀 news, then #cited-tail #search'
		const answer = `Hello! You said: ${ask}`
		const params = { model: MODEL.anthropic, input: ask, tools: [{ type: 'web_search' as const }] }
		const whole = await acct.openai.responses.create(params)
		const events: OpenAI.Responses.ResponseStreamEvent[] = []
		const s = acct.openai.responses.stream(params)
		s.on('event', (e) => events.push(e))
		const streamed = await s.finalResponse()

		expect(whole.output.map((o) => o.type)).toEqual(['web_search_call', 'web_search_call', 'message'])
		const message = whole.output[2] as OpenAI.Responses.ResponseOutputMessage
		const cited = [...answer.slice(0, answer.indexOf('#cited-tail'))].length // OpenAI counts code points
		expect(message.content).toEqual([
			{ type: 'output_text', text: answer, logprobs: [], annotations: [{ type: 'url_citation', url: 'https://example.com/page-1', title: 'Page 1', start_index: cited, end_index: [...answer].length }] },
		])
		expect(shape(streamed.output)).toEqual(shape(whole.output))

		// One message item, one part: every text event names it at content_index 0, and it is done once.
		const completed = events.find((e) => e.type === 'response.completed') as OpenAI.Responses.ResponseCompletedEvent
		const id = completed.response.output[2]!.id
		const ofMessage = events.filter((e) => 'item_id' in e && e.item_id === id)
		expect(events.filter((e) => e.type === 'response.output_item.added' && e.item.type === 'message')).toHaveLength(1)
		expect(ofMessage.filter((e) => e.type === 'response.content_part.added')).toHaveLength(1)
		expect(ofMessage.every((e) => !('content_index' in e) || e.content_index === 0)).toBe(true)
		expect(events.filter((e) => e.type === 'response.output_text.done').map((e) => (e as { text: string }).text)).toEqual([answer])
		expect(events.filter((e) => e.type === 'response.output_text.annotation.added').map((e) => (e as { annotation_index: number }).annotation_index)).toEqual([0])
		expect(events.filter((e) => e.type === 'response.output_item.done' && e.item.type === 'message')).toHaveLength(1)
		expect(streamed.output_text).toBe(answer)
		checkResponsesEvents(events, { oneAtATime: true, final: streamed })
	})

	it('should give text before tool calls as one message item, then the calls, whole and streamed alike', async () => {
		const acct = await m.account()
		const params = {
			model: MODEL.anthropic,
			input: 'weather? #tools #preface',
			tools: [{ type: 'function' as const, name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
		}
		const whole = await acct.openai.responses.create(params)
		const streamed = await acct.openai.responses.stream(params).finalResponse()
		expect(whole.output.map((o) => o.type)).toEqual(['message', 'function_call', 'function_call'])
		expect(shape(streamed.output)).toEqual(shape(whole.output))
	})
})
