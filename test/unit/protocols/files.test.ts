/**
 * Files, documents and audio across the codecs (QA conversion report items 3, 4, 6, 8): each protocol's decoder makes a
 * canonical file or audio part, each encoder writes the vendor's documented form, and what a vendor cannot take is a
 * 400 naming the part, never a silent drop.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import type { ChatRequest } from '../../../src/core/ir'
import { isBase64, parseDataUrl } from '../../../src/protocols/files'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { gemini } from '../../../src/protocols/gemini'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { encodeRequest as encodeResponses } from '../../../src/protocols/openai-responses/request'

const PDF = 'JVBERi0xLjQK'
const WAV = 'UklGRiQAAABXQVZF'

const fromAnthropic = (content: unknown[], more: Record<string, unknown> = {}): ChatRequest =>
	anthropicMessages.decodeRequest({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content }], ...more } as never)
const fromChat = (content: unknown[]): ChatRequest => openaiChat.decodeRequest({ model: 'm', messages: [{ role: 'user', content }] })
const fromGemini = (parts: unknown[]): ChatRequest => gemini.decodeRequest({ contents: [{ role: 'user', parts }] } as never)

/** The refusal an encoder throws, as status, code, param and message. */
function refusal(fn: () => unknown): { status: number; code?: string; param?: string; message: string } {
	try {
		fn()
	} catch (e) {
		if (!(e instanceof GatewayError)) throw e
		return { status: e.status, code: e.code, param: e.param, message: e.message }
	}
	throw new Error('expected a refusal')
}

const anthropicDocs = [
	{ type: 'text', text: 'summarize' },
	{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Report', citations: { enabled: true } },
	{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain doc' }, title: 'Notes', context: 'From the wiki' },
]

describe('Anthropic document blocks to other vendors (report item 3)', () => {
	it('should decode documents into canonical file parts with their title, context, citations and position', () => {
		const req = fromAnthropic(anthropicDocs)
		expect(req.messages[0].content.slice(1)).toEqual([
			{ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: PDF }, title: 'Report', citations: true, path: 'messages.0.content.1' },
			{ type: 'file', source: { kind: 'text', text: 'plain doc' }, title: 'Notes', context: 'From the wiki', path: 'messages.0.content.2' },
		])
		expect(req.extra?.__blocks).toBeUndefined()
	})

	it('should send a PDF to OpenAI as a file part with a data URL and a file name, and plain text as text with its title', () => {
		const body = openaiChat.encodeRequest(fromAnthropic(anthropicDocs), 'gpt-4o')
		expect(body.messages).toEqual([
			{
				role: 'user',
				content: [
					{ type: 'text', text: 'summarize' },
					{ type: 'file', file: { filename: 'Report.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
					{ type: 'text', text: 'Notes\nFrom the wiki\n\nplain doc' },
				],
			},
		])
	})

	it('should send a PDF to Gemini as inlineData and plain text as a text part', () => {
		const body = gemini.encodeRequest(fromAnthropic(anthropicDocs), 'gemini-2.5-flash')
		expect(body.contents).toEqual([
			{ role: 'user', parts: [{ text: 'summarize' }, { inlineData: { mimeType: 'application/pdf', data: PDF } }, { text: 'Notes\nFrom the wiki\n\nplain doc' }] },
		])
	})

	it('should not leave a document-only message empty upstream', () => {
		const req = fromAnthropic([anthropicDocs[1]])
		expect(openaiChat.encodeRequest(req, 'gpt-4o').messages).toEqual([
			{ role: 'user', content: [{ type: 'file', file: { filename: 'Report.pdf', file_data: `data:application/pdf;base64,${PDF}` } }] },
		])
		expect(gemini.encodeRequest(req, 'gemini-2.5-flash').contents).toEqual([{ role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: PDF } }] }])
	})

	it('should carry documents inside a tool_result: after the tool message for OpenAI, after the functionResponse for Gemini', () => {
		const req = anthropicMessages.decodeRequest({
			model: 'm',
			max_tokens: 10,
			messages: [
				{ role: 'user', content: 'read it' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input: {} }] },
				{
					role: 'user',
					content: [
						{
							type: 'tool_result',
							tool_use_id: 'toolu_1',
							content: [
								{ type: 'text', text: 'here' },
								{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
							],
						},
					],
				},
			],
		} as never)
		const chat = openaiChat.encodeRequest(req, 'gpt-4o').messages
		expect(chat.slice(2)).toEqual([
			{ role: 'tool', tool_call_id: 'toolu_1', content: 'here' },
			{ role: 'user', content: [{ type: 'file', file: { filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}` } }] },
		])
		const contents = gemini.encodeRequest(req, 'gemini-2.5-flash').contents
		expect(contents[2]).toEqual({
			role: 'user',
			parts: [{ functionResponse: { name: 'fetch', response: { result: 'here' } } }, { inlineData: { mimeType: 'application/pdf', data: PDF } }],
		})
	})

	it('should refuse a URL document for OpenAI and an Anthropic file id for OpenAI and Gemini, naming the block', () => {
		const url = fromAnthropic([{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }])
		expect(refusal(() => openaiChat.encodeRequest(url, 'gpt-4o'))).toMatchObject({ status: 400, code: 'unsupported_for_model', param: 'messages.0.content.0' })
		// Gemini fetches it (the relay inlines it first), or reads the web URL itself.
		expect(gemini.encodeRequest(url, 'gemini-2.5-flash').contents[0].parts).toEqual([{ fileData: { fileUri: 'https://example.com/a.pdf', mimeType: 'application/pdf' } }])
		const file = fromAnthropic([{ type: 'document', source: { type: 'file', file_id: 'file_011' } }])
		for (const encode of [() => openaiChat.encodeRequest(file, 'gpt-4o'), () => gemini.encodeRequest(file, 'gemini-2.5-flash')]) {
			const r = refusal(encode)
			expect(r).toMatchObject({ status: 400, code: 'unsupported_for_model', param: 'messages.0.content.0' })
			expect(r.message).toContain("Anthropic's file store")
		}
	})

	it('should round-trip every document source back to Anthropic', () => {
		const blocks = [
			{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'R', context: 'C', citations: { enabled: true }, cache_control: { type: 'ephemeral' } },
			{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain' } },
			{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
			{ type: 'document', source: { type: 'file', file_id: 'file_011' } },
			{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'chunk 1' }, { type: 'text', text: 'chunk 2' }] } },
		]
		expect(anthropicMessages.encodeRequest(fromAnthropic(blocks), 'claude').messages).toEqual([{ role: 'user', content: blocks }])
	})

	it('should count a PDF by pages, not by the length of its base64, for the reservation', async () => {
		const { boundInputTokens } = await import('../../../src/relay/estimate')
		const pdf = Buffer.from(`%PDF-1.4 ${'<</Type /Page>> '.repeat(3)} ${'x'.repeat(300_000)}`).toString('base64')
		const req = fromAnthropic([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }])
		// Three pages at 3,000 tokens, plus the message overhead; the text bound of 400 KB of base64 would be ~133,000.
		expect(boundInputTokens(req, JSON.stringify(req))).toBe(9_004)
	})
})

describe('OpenAI file and input_audio parts (report item 4)', () => {
	it('should decode file_data, file_id and input_audio with their position', () => {
		const req = fromChat([
			{ type: 'text', text: 'read this' },
			{ type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' } },
			{ type: 'file', file: { file_id: 'file-abc' } },
			{ type: 'input_audio', input_audio: { data: WAV, format: 'wav' } },
		])
		expect(req.messages[0].content.slice(1)).toEqual([
			{ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: PDF }, filename: 'a.pdf', path: 'messages[0].content[1]' },
			{ type: 'file', source: { kind: 'file_id', id: 'file-abc', store: 'openai' }, path: 'messages[0].content[2]' },
			{ type: 'audio', mediaType: 'audio/wav', data: WAV, path: 'messages[0].content[3]' },
		])
	})

	it('should take bare base64 file_data, telling a PDF by its bytes', () => {
		expect(fromChat([{ type: 'file', file: { file_data: PDF, filename: 'x' } }]).messages[0].content[0]).toMatchObject({
			source: { kind: 'base64', mediaType: 'application/pdf', data: PDF },
		})
	})

	it('should encode them back for OpenAI as written', () => {
		const parts = [
			{ type: 'text', text: 'read this' },
			{ type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
			{ type: 'file', file: { file_id: 'file-abc' } },
			{ type: 'input_audio', input_audio: { data: WAV, format: 'mp3' } },
		]
		expect(openaiChat.encodeRequest(fromChat(parts), 'gpt-4o-audio-preview').messages as unknown[]).toEqual([{ role: 'user', content: parts }])
	})

	it('should send a PDF to Anthropic as a document and to Gemini as inlineData, and audio to Gemini as inlineData', () => {
		const req = fromChat([{ type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' } }, { type: 'text', text: 'go' }])
		expect(anthropicMessages.encodeRequest(req, 'claude').messages[0].content).toEqual([
			{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
			{ type: 'text', text: 'go' },
		])
		const audio = fromChat([{ type: 'input_audio', input_audio: { data: WAV, format: 'mp3' } }])
		expect(gemini.encodeRequest(req, 'g').contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'application/pdf', data: PDF } })
		expect(gemini.encodeRequest(audio, 'g').contents[0].parts).toEqual([{ inlineData: { mimeType: 'audio/mp3', data: WAV } }])
	})

	it('should send a text file to Anthropic as a plain-text document', () => {
		const req = fromChat([{ type: 'file', file: { file_data: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}`, filename: 'n.txt' } }])
		expect(anthropicMessages.encodeRequest(req, 'claude').messages[0].content).toEqual([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' } }])
	})

	it('should refuse audio for Anthropic and a file_id for Anthropic and Gemini with a 400 naming the part', () => {
		const audio = fromChat([{ type: 'text', text: 'hi' }, { type: 'input_audio', input_audio: { data: WAV, format: 'wav' } }])
		const a = refusal(() => anthropicMessages.encodeRequest(audio, 'claude'))
		expect(a).toMatchObject({ status: 400, code: 'unsupported_for_model', param: 'messages[0].content[1]' })
		expect(a.message).toStartWith('messages[0].content[1]: audio (audio/wav)')
		const id = fromChat([{ type: 'file', file: { file_id: 'file-abc' } }])
		for (const encode of [() => anthropicMessages.encodeRequest(id, 'claude'), () => gemini.encodeRequest(id, 'g')])
			expect(refusal(encode)).toMatchObject({ status: 400, code: 'unsupported_for_model', param: 'messages[0].content[0]' })
	})

	it('should give the Responses encoder an input_file and refuse audio there', () => {
		const req = fromChat([{ type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' } }])
		expect(encodeResponses(req, 'gpt-4o').input).toEqual([
			{ type: 'message', role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF}` }] },
		])
		const audio = fromChat([{ type: 'input_audio', input_audio: { data: WAV, format: 'wav' } }])
		expect(refusal(() => encodeResponses(audio, 'gpt-4o'))).toMatchObject({ status: 400, param: 'messages[0].content[0]' })
	})
})

describe('Gemini fileData and inlineData parts (report item 6)', () => {
	it('should refuse a gs:// fileData for Anthropic and OpenAI, naming the part, instead of sending an image URL', () => {
		const req = fromGemini([{ text: 'summarize' }, { fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' } }])
		for (const encode of [() => anthropicMessages.encodeRequest(req, 'claude'), () => openaiChat.encodeRequest(req, 'gpt-4o')]) {
			const r = refusal(encode)
			expect(r).toMatchObject({ status: 400, code: 'unsupported_for_model', param: 'contents[0].parts[1]' })
			expect(r.message).toContain('gs://b/x.pdf')
		}
		expect(gemini.encodeRequest(req, 'g').contents[0].parts[1]).toEqual({ fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' } })
	})

	it('should map an inlineData PDF to an Anthropic document and an OpenAI file, and inline audio to input_audio', () => {
		const req = fromGemini([{ inlineData: { mimeType: 'application/pdf', data: PDF } }, { inlineData: { mimeType: 'audio/wav', data: WAV } }])
		expect(req.messages[0].content).toEqual([
			{ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: PDF }, path: 'contents[0].parts[0]' },
			{ type: 'audio', mediaType: 'audio/wav', data: WAV, path: 'contents[0].parts[1]' },
		])
		expect(openaiChat.encodeRequest(req, 'gpt-4o').messages[0]).toEqual({
			role: 'user',
			content: [
				{ type: 'file', file: { filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
				{ type: 'input_audio', input_audio: { data: WAV, format: 'wav' } },
			],
		})
		const pdfOnly = fromGemini([{ inlineData: { mimeType: 'application/pdf', data: PDF } }])
		expect(anthropicMessages.encodeRequest(pdfOnly, 'claude').messages[0].content).toEqual([
			{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
		])
	})

	it('should refuse audio OpenAI cannot take (not wav or mp3)', () => {
		const req = fromGemini([{ inlineData: { mimeType: 'audio/ogg', data: 'T2dn' } }])
		expect(refusal(() => openaiChat.encodeRequest(req, 'gpt-4o'))).toMatchObject({ status: 400, param: 'contents[0].parts[0]' })
	})

	it('should keep a web PDF URL as a URL document for Anthropic', () => {
		const req = fromGemini([{ fileData: { fileUri: 'https://example.com/a.pdf', mimeType: 'application/pdf' } }])
		expect(anthropicMessages.encodeRequest(req, 'claude').messages[0].content).toEqual([{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }])
	})
})

describe('tool results with several parts to Gemini (report item 8)', () => {
	const toolTurn = (content: unknown[]): ChatRequest =>
		openaiChat.decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'weather?' },
				{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
				{ role: 'tool', tool_call_id: 'call_1', content },
			],
		})

	it('should keep the boundary between text parts with a newline', () => {
		const req = toolTurn([
			{ type: 'text', text: 'sunny' },
			{ type: 'text', text: '20C' },
		])
		expect(gemini.encodeRequest(req, 'gemini-2.5-flash').contents[2].parts).toEqual([{ functionResponse: { name: 'get_weather', response: { result: 'sunny\n20C' } } }])
		expect(openaiChat.encodeRequest(req, 'gpt-4o').messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'sunny\n20C' })
	})

	const withImage = (): ChatRequest =>
		anthropicMessages.decodeRequest({
			model: 'm',
			max_tokens: 10,
			messages: [
				{ role: 'user', content: 'look' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
				{
					role: 'user',
					content: [
						{
							type: 'tool_result',
							tool_use_id: 'toolu_1',
							content: [
								{ type: 'text', text: 'done' },
								{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } },
							],
						},
					],
				},
			],
		} as never)

	it('should put a tool result image in functionResponse.parts for Gemini 3 models (multimodal function response)', () => {
		expect(gemini.encodeRequest(withImage(), 'gemini-3-pro-preview').contents[2].parts).toEqual([
			{ functionResponse: { name: 'screenshot', response: { result: 'done' }, parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBO' } }] } },
		])
	})

	it('should keep a tool result image after the functionResponse for earlier models', () => {
		expect(gemini.encodeRequest(withImage(), 'gemini-2.5-flash').contents[2].parts).toEqual([
			{ functionResponse: { name: 'screenshot', response: { result: 'done' } } },
			{ inlineData: { mimeType: 'image/png', data: 'iVBO' } },
		])
	})
})

describe('parseDataUrl', () => {
	it('should read the media type (lowercased) and the data of a base64 data URL, its parameters aside', () => {
		expect(parseDataUrl('data:image/PNG;name=a.png;base64,iVBO')).toEqual({ mediaType: 'image/png', data: 'iVBO' })
		expect(parseDataUrl('data:image/png;base64,a,b')).toEqual({ mediaType: 'image/png', data: 'a,b' })
		expect(parseDataUrl('data:image/png;base64,\nab\ncd')).toEqual({ mediaType: 'image/png', data: '\nab\ncd' })
		expect(parseDataUrl('data:a;b;base64,')).toEqual({ mediaType: 'a', data: '' })
	})

	it('should refuse what is not one: no media type, not base64, no data part, a comma before the encoding', () => {
		for (const url of ['data:;base64,xx', 'data:image/png,xx', 'data:image/png;base64', 'data:image/png;BASE64,xx', 'data:a,b;base64,c', 'x:data:image/png;base64,a', 'https://a/b.png'])
			expect([url, parseDataUrl(url)]).toEqual([url, undefined])
	})
})

describe('isBase64: what a data URL may carry before a vendor decodes it', () => {
	it('should take the standard alphabet, padded or not, and lines wrapped as MIME wraps them', () => {
		for (const ok of ['iVBORw0K', 'iVBORw0', 'iVBORw0=', 'iVBORw==', 'iVBORw0K\r\niVBO', '']) expect(isBase64(ok)).toBe(true)
	})
	it('should refuse a foreign character, padding inside, URL-safe digits and a length that holds no whole bytes', () => {
		for (const bad of ['!!!!', 'iVB=Rw==', 'iV-_', 'iVBOR', 'iVBORw===', 'not base64!', 'iVBO Rw0K!']) expect(isBase64(bad)).toBe(false)
	})
})
