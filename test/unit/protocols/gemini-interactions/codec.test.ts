/** The Interactions codec: input forms → canonical, canonical → Interaction and step events, and back (upstream side). */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { CARRIED_THINKING_TAG } from '../../../../src/core/signatures'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse, Part } from '../../../../src/core/ir'
import type { SseFrame } from '../../../../src/core/sse'
import { geminiInteractions, interactionsCodec } from '../../../../src/protocols/gemini-interactions'
import { decodeUsage as decodeGeminiUsage, encodeUsage as encodeGeminiUsage } from '../../../../src/protocols/gemini/usage'
import { decodeUsage, encodeUsage } from '../../../../src/protocols/gemini-interactions/response'

const decode = (body: Record<string, unknown>) => geminiInteractions.decodeRequest(body as never)

describe('gemini-interactions decodeRequest', () => {
	it('should read a string, a content list and steps as the same kind of conversation', () => {
		expect(decode({ model: 'm', input: 'hi' }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
		expect(decode({ model: 'm', input: [{ type: 'text', text: 'a' }, { type: 'image', data: 'AAAA', mime_type: 'image/png' }] }).messages).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] },
		])
		const steps = decode({
			model: 'm',
			input: [
				{ type: 'user_input', content: [{ type: 'text', text: 'q' }] },
				{ type: 'thought', signature: 'sig', summary: [{ type: 'text', text: 'hmm' }] },
				{ type: 'function_call', id: 'c1__ts_c2ln', name: 'f', arguments: { x: 1 } },
				{ type: 'function_result', call_id: 'c1__ts_c2ln', name: 'f', result: { ok: true } },
			],
		}).messages
		expect(steps).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'q' }] },
			{
				role: 'assistant',
				content: [
					{ type: 'thinking', text: 'hmm', signature: 'sig' },
					{ type: 'tool_call', id: 'c1', name: 'f', input: { x: 1 }, signature: 'c2ln' },
				],
			},
			{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'c1', name: 'f', content: [{ type: 'text', text: '{"ok":true}' }] }] },
		])
	})

	it('should read turns of the earlier revision', () => {
		expect(decode({ model: 'm', input: [{ role: 'user', content: 'hi' }, { role: 'model', content: [{ type: 'text', text: 'yo' }] }, { role: 'user', content: 'again' }] }).messages).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'hi' }] },
			{ role: 'assistant', content: [{ type: 'text', text: 'yo' }] },
			{ role: 'user', content: [{ type: 'text', text: 'again' }] },
		])
	})

	it('should map generation_config, tools and a JSON response_format', () => {
		const r = decode({
			model: 'models/m',
			input: 'x',
			system_instruction: 'sys',
			tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'google_search' }],
			generation_config: { max_output_tokens: 9, temperature: 0.5, stop_sequences: ['END'], thinking_level: 'high', thinking_summaries: 'auto', tool_choice: { allowed_tools: { mode: 'any', tools: ['f'] } } },
			response_format: { type: 'text', mime_type: 'application/json', schema: { type: 'object' } },
		})
		expect(r.model).toBe('m')
		expect(r.system).toEqual([{ type: 'text', text: 'sys' }])
		expect(r.tools).toEqual([{ name: 'f', parameters: { type: 'object' } }])
		// Google Search is the canonical web search, run by whichever vendor serves the model; Gemini's own API gets it as sent.
		expect(r.webSearch).toEqual({})
		expect(r.vendorOnly).toBeUndefined()
		expect(r.extra?.tools).toEqual([{ type: 'google_search' }])
		expect(decode({ model: 'm', input: 'x', tools: [{ type: 'code_execution' }] }).vendorOnly).toEqual([{ protocol: 'gemini-interactions', what: 'built-in tool code_execution', path: 'tools[0].type' }])
		expect(r).toMatchObject({ maxTokens: 9, temperature: 0.5, stop: ['END'], reasoning: { enabled: true, effort: 'high', includeThoughts: true }, toolChoice: { type: 'tool', name: 'f' } })
		expect(r.responseFormat).toEqual({ type: 'json_schema', name: 'response', schema: { type: 'object' }, enforced: true })
	})

	it('should answer 400 naming the field it cannot read', () => {
		const bad = (body: Record<string, unknown>) => {
			try {
				decode(body)
			} catch (e) {
				return (e as GatewayError).param
			}
			return 'accepted'
		}
		expect(bad({ model: 'm' })).toBe('input')
		expect(bad({ model: 'm', input: [{ type: 'function_call', name: 'f' }] })).toBe('input[0].id')
		expect(bad({ model: 'm', input: [{ type: 'user_input', content: [{ type: 'image' }] }] })).toBe('input[0].content[0]')
		expect(bad({ model: 'm', input: 'x', generation_config: { thinking_level: 'extreme' } })).toBe('generation_config.thinking_level')
		expect(bad({ model: 'm', input: 'x', agent: 'deep-research' })).toBe('agent')
	})
})

const answer: ChatResponse = {
	id: 'up-1',
	model: 'x',
	content: [
		{ type: 'thinking', text: 'plan', signature: 'S1' },
		{ type: 'text', text: 'Hello' },
		{ type: 'tool_call', id: 'c1', name: 'f', input: { a: 1 }, signature: 'c2ln' },
	],
	stopReason: 'tool_use',
	usage: { input: 10, output: 7, cacheRead: 4, cacheWrite: 0, reasoning: 2 },
}

describe('gemini-interactions encodeResponse', () => {
	it('should show the answer as steps, the status and the usage as Google counts them', () => {
		const kept: unknown[] = []
		const i = interactionsCodec({ id: 'v1_x', keep: (x) => kept.push(x) }).encodeResponse(answer, { model: 'm', includeThoughts: true })
		expect(i).toMatchObject({ id: 'v1_x', object: 'interaction', model: 'm', status: 'requires_action' })
		expect(i.steps).toEqual([
			{ type: 'thought', signature: 'S1', summary: [{ type: 'text', text: 'plan' }] },
			{ type: 'model_output', content: [{ type: 'text', text: 'Hello' }] },
			{ type: 'function_call', id: 'c1__ts_c2ln', name: 'f', arguments: { a: 1 } },
		])
		expect(i.usage).toEqual({ total_input_tokens: 14, total_cached_tokens: 4, total_output_tokens: 5, total_thought_tokens: 2, total_tokens: 21 })
		expect(kept).toEqual([i])
		// Read back (an upstream of this protocol): the same answer.
		expect(geminiInteractions.decodeResponse(i)).toMatchObject({ content: answer.content, stopReason: 'tool_use', usage: answer.usage })
	})

	it('should leave the thought summary out unless the client asked for it, carrying the thinking whole for the next turn', () => {
		const i = geminiInteractions.encodeResponse(answer, { model: 'm' })
		const thought = i.steps![0] as { type: string; signature: string; summary?: unknown }
		expect(thought.summary).toBeUndefined()
		expect(thought.signature).toStartWith(CARRIED_THINKING_TAG)
		// Sent back, it is the thinking as the vendor made it (Claude checks text and signature together).
		expect(decode({ model: 'm', input: [{ type: 'user_input', content: [{ type: 'text', text: 'q' }] }, ...i.steps!] }).messages[1]!.content).toEqual(answer.content as Part[])
		const altered = { ...thought, signature: `${thought.signature.slice(0, -4)}AAAA` }
		expect(() => decode({ model: 'm', input: [altered] })).toThrow('altered')
	})
})

describe('gemini-interactions stream', () => {
	const events: StreamEvent[] = [
		{ type: 'start', id: 'up', model: 'x' },
		{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
		{ type: 'thinking_delta', index: 0, text: 'pl' },
		{ type: 'thinking_delta', index: 0, text: 'an' },
		{ type: 'signature_delta', index: 0, signature: 'S1' },
		{ type: 'block_stop', index: 0 },
		{ type: 'block_start', index: 1, block: { kind: 'text' } },
		{ type: 'text_delta', index: 1, text: 'Hel' },
		{ type: 'text_delta', index: 1, text: 'lo' },
		{ type: 'block_stop', index: 1 },
		{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'c1', name: 'f', signature: 'c2ln' } },
		{ type: 'json_delta', index: 2, json: '{"a":' },
		{ type: 'json_delta', index: 2, json: '1}' },
		{ type: 'block_stop', index: 2 },
		{ type: 'usage', usage: { input: 10, output: 7, cacheRead: 4, reasoning: 2 } },
		{ type: 'finish', reason: 'tool_use' },
	]

	const encode = (evs: StreamEvent[], o: Parameters<typeof interactionsCodec>[0] = {}) => {
		const enc = interactionsCodec({ id: 'v1_s', ...o }).streamEncoder({ model: 'm', includeThoughts: true })
		const out: SseFrame[] = []
		for (const e of evs) enc.push(e, out)
		enc.end(out)
		return out
	}

	it('should name each frame by its event_type, in the step lifecycle, and keep the whole interaction', () => {
		let kept: Record<string, unknown> | undefined
		const frames = encode(events, { keep: (i) => (kept = i) })
		expect(frames.map((f) => f.event)).toEqual([
			'interaction.created',
			'interaction.status_update',
			'step.start',
			'step.delta',
			'step.delta',
			'step.delta',
			'step.stop',
			'step.start',
			'step.delta',
			'step.delta',
			'step.stop',
			'step.start',
			'step.delta',
			'step.delta',
			'step.stop',
			'interaction.completed',
			'done',
		])
		// Google's end marker closes it; every other frame is an event named as its event_type.
		expect(frames.at(-1)!.data).toBe('[DONE]')
		for (const f of frames.slice(0, -1)) expect(JSON.parse(f.data).event_type).toBe(f.event)
		const done = JSON.parse(frames.at(-2)!.data).interaction
		expect(done).toMatchObject({ id: 'v1_s', status: 'requires_action', usage: { total_input_tokens: 14, total_output_tokens: 5, total_thought_tokens: 2 } })
		expect(done.steps).toBeUndefined()
		expect(kept!.steps).toEqual([
			{ type: 'thought', signature: 'S1', summary: [{ type: 'text', text: 'plan' }] },
			{ type: 'model_output', content: [{ type: 'text', text: 'Hello' }] },
			{ type: 'function_call', id: 'c1__ts_c2ln', name: 'f', arguments: { a: 1 } },
		])
	})

	it('should decode its own stream back into the same events (upstream side)', () => {
		const dec = geminiInteractions.streamDecoder()
		const out: StreamEvent[] = []
		for (const f of encode(events)) dec.push(f, out)
		dec.end(out)
		expect(out.slice(1)).toEqual(events.slice(1).map((e) => (e.type === 'usage' ? { type: 'usage', usage: { ...e.usage, cacheWrite: 0 } } : e)))
		expect(out[0]).toMatchObject({ type: 'start', id: 'v1_s', model: 'm' })
	})

	it('should end with an error event when the upstream fails, and a cut stream the same way', () => {
		const failed = encode([events[0]!, { type: 'error', error: new GatewayError('overloaded', 'busy') }])
		expect(failed.at(-1)!.event).toBe('error')
		expect(JSON.parse(failed.at(-1)!.data)).toMatchObject({ event_type: 'error', error: { code: 'UNAVAILABLE', message: 'busy' } })
		const cut = encode(events.slice(0, 8))
		expect(cut.at(-1)!.event).toBe('error')
		expect(cut.map((f) => f.event)).not.toContain('interaction.completed')
	})
})

describe('gemini-interactions hidden thinking, streamed', () => {
	it('should send one signature carrying the thinking at the end of its step, and no summary', () => {
		const enc = interactionsCodec({ id: 'v1_h' }).streamEncoder({ model: 'm' })
		const out: SseFrame[] = []
		for (const e of [
			{ type: 'start', id: 'u', model: 'x' },
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'secret plan' },
			{ type: 'signature_delta', index: 0, signature: 'S1' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'redacted_thinking', data: 'ENC' } },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'end_turn' },
		] as StreamEvent[])
			enc.push(e, out)
		const deltas = out.filter((f) => f.event === 'step.delta').map((f) => JSON.parse(f.data).delta)
		expect(deltas.map((d) => d.type)).toEqual(['thought_signature', 'thought_signature'])
		const back = decode({ model: 'm', input: [{ type: 'thought', signature: deltas[0].signature }, { type: 'thought', signature: deltas[1].signature }] }).messages[0]!.content
		expect(back).toEqual([
			{ type: 'thinking', text: 'secret plan', signature: 'S1' },
			{ type: 'redacted_thinking', data: 'ENC' },
		])
	})
})

describe('gemini-interactions citations', () => {
	// Claude's text in blocks, a cited one after an uncited one; an emoji (4 UTF-8 bytes) and accents before the span.
	const content: ChatResponse['content'] = [
		{ type: 'text', text: 'Café 😀: ' },
		{ type: 'text', text: 'it rained in 東京.', citations: [{ url: 'https://a.example', title: 'A' }, { url: 'https://b.example', start: 13, end: 15 }] },
	]
	const whole = `Café 😀: it rained in 東京.`
	const bytes = (s: string) => Buffer.byteLength(s)
	const annotations = [
		{ type: 'url_citation', url: 'https://a.example', title: 'A', start_index: bytes('Café 😀: '), end_index: bytes(whole) },
		{ type: 'url_citation', url: 'https://b.example', start_index: bytes('Café 😀: it rained in '), end_index: bytes('Café 😀: it rained in 東京') },
	]
	const steps = [{ type: 'model_output', content: [{ type: 'text', text: whole, annotations }] }]
	const events = (): StreamEvent[] => [
		{ type: 'start', id: 'u', model: 'm' },
		...content.flatMap((p, index): StreamEvent[] => [
			{ type: 'block_start', index, block: { kind: 'text' } },
			...((p.type === 'text' && p.citations) || []).map((citation): StreamEvent => ({ type: 'citation', index, citation })),
			{ type: 'text_delta', index, text: (p as { text: string }).text },
			{ type: 'block_stop', index },
		]),
		{ type: 'finish', reason: 'end_turn' },
	]

	it('should give a run of cited text blocks as one text with url_citation annotations in UTF-8 bytes, whole and streamed', () => {
		const i = geminiInteractions.encodeResponse({ id: 'x', model: 'm', content, stopReason: 'end_turn', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 } }, { model: 'm' })
		expect(i.steps).toEqual(steps)
		let kept: Record<string, unknown> | undefined
		const enc = interactionsCodec({ id: 'v1_c', keep: (x) => (kept = x) }).streamEncoder({ model: 'm' })
		const frames: SseFrame[] = []
		for (const e of events()) enc.push(e, frames)
		const data = frames.slice(0, -1).map((f) => JSON.parse(f.data))
		// One step: the second block continues it, and its citations follow its text.
		expect(data.filter((d) => d.event_type === 'step.start' || d.event_type === 'step.stop').map((d) => [d.event_type, d.index])).toEqual([['step.start', 0], ['step.stop', 0]])
		expect(data.filter((d) => d.delta?.type === 'text_annotation_delta').map((d) => d.delta)).toEqual([{ type: 'text_annotation_delta', annotations }])
		expect(kept!.steps).toEqual(steps)
	})

	it('should read the annotations back as citations spanning the same words (upstream side)', () => {
		const [part] = geminiInteractions.decodeResponse({ id: 'v1_c', status: 'completed', steps }).content
		expect(part).toEqual({
			type: 'text',
			text: whole,
			citations: [
				{ url: 'https://a.example', title: 'A', start: 'Café 😀: '.length, end: whole.length, citedText: 'it rained in 東京.' },
				{ url: 'https://b.example', start: 'Café 😀: it rained in '.length, end: 'Café 😀: it rained in 東京'.length, citedText: '東京' },
			],
		})
		const enc = interactionsCodec({ id: 'v1_c' }).streamEncoder({ model: 'm' })
		const frames: SseFrame[] = []
		for (const e of events()) enc.push(e, frames)
		const dec = geminiInteractions.streamDecoder()
		const out: StreamEvent[] = []
		for (const f of frames) dec.push(f, out)
		expect(out.filter((e) => e.type === 'citation')).toEqual(part!.type === 'text' ? part.citations!.map((citation) => ({ type: 'citation', index: 0, citation })) : [])
	})
})

describe('gemini-interactions usage by modality', () => {
	it('should split the totals by modality when the usage knows audio or image tokens, and read the split back (upstream side)', () => {
		const usage = { input: 100, output: 40, cacheRead: 30, cacheWrite: 0, reasoning: 10, audioInput: 20, imageInput: 50, audioCacheRead: 5, audioOutput: 8, imageOutput: 2 }
		const u = encodeUsage(usage)
		expect(u).toEqual({
			total_input_tokens: 130,
			input_tokens_by_modality: [
				{ modality: 'text', tokens: 55 },
				{ modality: 'image', tokens: 50 },
				{ modality: 'audio', tokens: 25 },
			],
			total_cached_tokens: 30,
			cached_tokens_by_modality: [
				{ modality: 'text', tokens: 25 },
				{ modality: 'audio', tokens: 5 },
			],
			total_output_tokens: 30,
			output_tokens_by_modality: [
				{ modality: 'text', tokens: 20 },
				{ modality: 'audio', tokens: 8 },
				{ modality: 'image', tokens: 2 },
			],
			total_thought_tokens: 10,
			total_tokens: 170,
		})
		expect(decodeUsage(u)).toEqual(usage)
		// Gemini's tool-use prompt (search results fed back) is uncached input, its audio too.
		expect(decodeUsage({ total_input_tokens: 10, total_tool_use_tokens: 4, tool_use_tokens_by_modality: [{ modality: 'audio', tokens: 4 }] })).toMatchObject({ input: 14, audioInput: 4 })
		expect(Object.keys(encodeUsage({ input: 5, output: 2 }))).toEqual(['total_input_tokens', 'total_output_tokens', 'total_tokens'])
	})

	it("should keep the tools' tokens apart through the canonical usage: Interactions and generateContent alike", () => {
		const u = decodeUsage({ total_input_tokens: 10, total_cached_tokens: 2, total_tool_use_tokens: 4, total_output_tokens: 3, total_tokens: 17 })
		expect(u).toEqual({ input: 12, output: 3, cacheRead: 2, cacheWrite: 0, reasoning: 0, toolUseInput: 4 })
		expect(encodeUsage(u!)).toEqual({ total_input_tokens: 10, total_cached_tokens: 2, total_output_tokens: 3, total_tool_use_tokens: 4, total_tokens: 17 })
		const fromGemini = decodeGeminiUsage({ promptTokenCount: 10, toolUsePromptTokenCount: 4, candidatesTokenCount: 3, thoughtsTokenCount: 1, totalTokenCount: 18 })
		expect(fromGemini).toMatchObject({ input: 14, output: 4, toolUseInput: 4 })
		expect(encodeUsage(fromGemini!)).toMatchObject({ total_input_tokens: 10, total_tool_use_tokens: 4, total_output_tokens: 3, total_thought_tokens: 1, total_tokens: 18 })
		expect(encodeGeminiUsage(fromGemini!)).toMatchObject({ promptTokenCount: 10, toolUsePromptTokenCount: 4, candidatesTokenCount: 3, totalTokenCount: 18 })
	})
})
