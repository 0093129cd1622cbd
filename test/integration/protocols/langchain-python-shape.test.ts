/**
 * LangChain for Python as it reaches the gateway: `langchain-openai` 1.6.6 (`ChatOpenAI` over Chat Completions and with
 * `use_responses_api=True`, the `openai` 3.22.1 SDK underneath) and `langchain-google-genai` 4.4.0
 * (`ChatGoogleGenerativeAI(base_url=root)`, the `google-genai` 2.25.0 SDK underneath), with `langchain-core` 1.6.5 and
 * `langchain` 1.4.2's `create_agent`. The bodies below were recorded by a logging proxy between the Python clients and
 * the gateway (the matrix's three mock vendors behind it); headers are shortened to the ones that matter.
 * What is unusual in them: google-genai converts the part's own keys to lowerCamel but not those of a dict LangChain
 * puts inside it, so an image, a PDF or audio goes as `inlineData: {data, mime_type}` and a file as
 * `fileData: {file_uri, mime_type}` (mixed spellings, which Google's proto-JSON parser takes, as it takes either
 * spelling of every field), and the bytes LangChain decoded from a data URI or a `base64` block are re-encoded URL-safe
 * (Python's `base64.urlsafe_b64encode`: `-` and `_` for `+` and `/`, which proto-JSON `bytes` also accepts); `thinkingConfig` goes as `{include_thoughts, thinking_level: "LOW"}`; tool parameters in
 * Gemini's uppercase types (`STRING`, `OBJECT`); a tool result as `functionResponse.response: {output}` without an id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { tagSignature } from '../../../src/core/signatures'
import { textSignatureFor, thinkingSignature } from '../../mocks'
import { type Account, GEMINI_3, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithGemini3, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

type Obj = Record<string, any>
/** A 2×2 red PNG, as the captures carried it. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=='

/** The headers google-genai 2.25.0 sends under LangChain (its user agent names the integration). */
const genaiHeaders = (acct: Account) => ({
	'content-type': 'application/json',
	'user-agent': 'google-genai-sdk/2.25.0 gl-python/3.11.7 langchain-google-genai/4.4.0-ChatGoogleGenerativeAI',
	'x-goog-api-client': 'google-genai-sdk/2.25.0 gl-python/3.11.7',
	'x-goog-api-key': acct.key,
})
const gemini = (acct: Account, model: string, body: Obj, stream = false) =>
	fetch(`${m.app.url}/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, {
		method: 'POST',
		headers: genaiHeaders(acct),
		body: JSON.stringify(body),
	})

/** `ChatGoogleGenerativeAI.invoke([HumanMessage(content=[{type: 'text', …}, media])])`: the body as recorded. */
const mediaBody = (media: Obj) => ({
	contents: [{ parts: [{ text: 'what is this' }, media], role: 'user' }],
	safetySettings: [],
	generationConfig: { temperature: 0.7, candidateCount: 1 },
})

describe('ChatGoogleGenerativeAI: media parts with snake_case keys inside lowerCamel ones', () => {
	// An `image_url` data URI or a v1 `{type: 'image', base64, mime_type}` block; the gateway answered 400
	// `"contents.0.parts.1.inlineData.mimeType" Expected required property` before it read the part, for every model.
	for (const model of [MODEL.openai, MODEL.anthropic, MODEL.gemini, GEMINI_3]) {
		it(`should take inlineData {data, mime_type} as the image it is (${model})`, async () => {
			const acct = await m.account()
			const res = await gemini(acct, model, mediaBody({ inlineData: { data: PNG, mime_type: 'image/png' } }))
			expect(res.status).toBe(200)
			const body = (await res.json()) as Obj
			expect(body.candidates[0].content.parts.map((p: Obj) => p.text).join('')).toStartWith('I see 1 image. ')
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.model, r.status, r.input_tokens])).toEqual([[model, 200, body.usageMetadata.promptTokenCount]])
		})
	}

	it('should send the image on to Claude as a base64 image of that type', async () => {
		const acct = await m.account()
		expect((await gemini(acct, MODEL.anthropic, mediaBody({ inlineData: { data: PNG, mime_type: 'image/png' } }))).status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.messages[0].content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } })
	})

	it('should take a PDF as inlineData {data, mime_type} and a Files API URI as fileData {file_uri, mime_type}', async () => {
		const acct = await m.account()
		// `{type: 'file', base64, mime_type: 'application/pdf'}`: to Claude a base64 document.
		expect((await gemini(acct, MODEL.anthropic, mediaBody({ inlineData: { data: PNG, mime_type: 'application/pdf' } }))).status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.messages[0].content[1]).toMatchObject({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PNG } })
		// `{type: 'media', file_uri, mime_type}`: a Gemini file reaches Gemini as the fileData it was (same protocol: as sent).
		const uri = 'https://generativelanguage.googleapis.com/v1beta/files/abc'
		const res = await gemini(acct, MODEL.gemini, mediaBody({ fileData: { file_uri: uri, mime_type: 'application/pdf' } }))
		expect(res.status).toBe(200)
		expect(lastRequest(m.mocks.gemini).body.contents[0].parts[1]).toEqual({ fileData: { file_uri: uri, mime_type: 'application/pdf' } })
	})

	it('should still refuse inlineData without a type in either spelling, naming the field', async () => {
		const acct = await m.account()
		const sent = m.mocks.anthropic.requests.length
		const res = await gemini(acct, MODEL.anthropic, mediaBody({ inlineData: { data: PNG } }))
		expect(res.status).toBe(400)
		const body = (await res.json()) as Obj
		expect(body.error.status).toBe('INVALID_ARGUMENT')
		expect(body.error.message).toContain('inlineData.mimeType')
		expect(m.mocks.anthropic.requests.length).toBe(sent)
	})
})

/** Standard base64 of bytes whose encoding has `+`, `/` and padding (`UklGRiQAAABXQVZFZm10IPv/v/4+AA==`: a WAV header's start, then bytes chosen for them). */
const STD = Buffer.from([...Buffer.from('RIFF$\x00\x00\x00WAVEfmt ', 'latin1'), 0xfb, 0xff, 0xbf, 0xfe, 0x3e, 0x00]).toString('base64')
/** The same bytes as google-genai for Python writes them. */
const URLSAFE = STD.replaceAll('+', '-').replaceAll('/', '_')

describe('ChatGoogleGenerativeAI: media bytes in URL-safe base64', () => {
	// `{type: 'audio', base64, mime_type: 'audio/wav'}` to a GPT model: OpenAI's `input_audio.data` takes standard base64
	// only, so the gateway's 400 was OpenAI's "Invalid 'messages[0].content[1].input_audio.data': expected base64-encoded audio."
	it('should send audio to OpenAI as standard base64', async () => {
		const acct = await m.account()
		const res = await gemini(acct, MODEL.openai, mediaBody({ inlineData: { data: URLSAFE, mime_type: 'audio/wav' } }))
		expect(res.status).toBe(200)
		expect(lastRequest(m.mocks.openai).body.messages[0].content[1]).toEqual({ type: 'input_audio', input_audio: { data: STD, format: 'wav' } })
	})

	// An image or a PDF to Claude: Anthropic refuses URL-safe base64 ("….image.source.base64: invalid base64 data").
	it('should send an image and a PDF to Claude as standard base64', async () => {
		const acct = await m.account()
		expect((await gemini(acct, MODEL.anthropic, mediaBody({ inlineData: { data: URLSAFE, mime_type: 'image/png' } }))).status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.messages[0].content[1].source).toEqual({ type: 'base64', media_type: 'image/png', data: STD })
		expect((await gemini(acct, MODEL.anthropic, mediaBody({ inlineData: { data: URLSAFE, mime_type: 'application/pdf' } }))).status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.messages[0].content[1].source).toEqual({ type: 'base64', media_type: 'application/pdf', data: STD })
	})

	it('should pad URL-safe base64 written without padding', async () => {
		const acct = await m.account()
		const unpadded = URLSAFE.replace(/=+$/, '')
		expect(unpadded).not.toBe(URLSAFE)
		expect((await gemini(acct, MODEL.anthropic, mediaBody({ inlineData: { data: unpadded, mime_type: 'image/png' } }))).status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.messages[0].content[1].source.data).toBe(STD)
	})
})

/** What google-genai for Python does to a `thoughtSignature` (a `bytes` field): decodes it, then writes it URL-safe. */
const asPythonBytes = (sig: string) => Buffer.from(sig, 'base64').toString('base64').replaceAll('+', '-').replaceAll('/', '_')

/** The weather tool as LangChain declares it to Gemini: uppercase types, no `$schema`. */
const WEATHER = { functionDeclarations: [{ description: 'Get the weather for a city.', name: 'get_weather', parameters: { properties: { city: { type: 'STRING' } }, required: ['city'], type: 'OBJECT' } }] }
const ASK = 'weather in Paris? #call get_weather {"city": "Paris"}'

describe('ChatGoogleGenerativeAI with include_thoughts: a Claude tool loop', () => {
	// `ChatGoogleGenerativeAI(model='claude-m', include_thoughts=True, thinking_budget=2048).bind_tools([get_weather])`,
	// streamed, then the tool's result sent back. Claude's signature reaches the client behind the gateway's `anthropic`
	// tag; google-genai hands it back URL-safe, and Anthropic refuses a signature it did not issue ("Invalid `signature`
	// in `thinking` block"), so the gateway turned thinking off for the turn (the mock answered 400 before).
	it('should give Claude its thinking signature back as Claude wrote it', async () => {
		const acct = await m.account()
		const config = { temperature: 0.7, candidateCount: 1, thinkingConfig: { include_thoughts: true, thinking_budget: 2048 } }
		const first = { contents: [{ parts: [{ text: ASK }], role: 'user' }], safetySettings: [], tools: [WEATHER], generationConfig: config }
		const res = await gemini(acct, MODEL.anthropic, first)
		expect(res.status).toBe(200)
		const parts = ((await res.json()) as Obj).candidates[0].content.parts as Obj[]
		const thought = parts.find((p) => p.thought)!
		const call = parts.find((p) => p.functionCall)!
		// The signature Anthropic issued has `+` and `/` (standard base64), so the client's copy differs from it.
		expect(asPythonBytes(thought.thoughtSignature)).not.toBe(thought.thoughtSignature)
		const model = {
			parts: [
				{ text: thought.text, thought: true, thoughtSignature: asPythonBytes(thought.thoughtSignature) },
				{ functionCall: { args: call.functionCall.args, name: call.functionCall.name }, ...(call.thoughtSignature && { thoughtSignature: asPythonBytes(call.thoughtSignature) }) },
			],
			role: 'model',
		}
		const results = { parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny in Paris' } } }], role: 'user' }
		const second = await gemini(acct, MODEL.anthropic, { ...first, contents: [first.contents[0], model, results] })
		expect(second.status).toBe(200)
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
		expect(sent.messages[1].content[0]).toEqual({ type: 'thinking', thinking: thought.text, signature: thinkingSignature(thought.text) })
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.status, r.reasoning_tokens > 0])).toEqual([
			[200, true],
			[200, true],
		])
	})
})

describe('ChatOpenAI(use_responses_api=True) on Gemini 3: a streamed answer replayed', () => {
	// LangChain merges the streamed items into one message and replays them in order: the thought's reasoning item
	// (`encrypted_content: "sbsig:"`, nothing signed), the answer, then the item that carried the text part's signature
	// (streamed after the text, as Gemini sends it), with `status` and the part's `logprobs` dropped. Pinned: Gemini 3
	// gets its signature back on the text part, and nothing of the unsigned thought.
	it('should put the signature after the message back on its text part', async () => {
		const acct = await m.account()
		const answer = 'Hello! You said: first question'
		const body = {
			input: [
				{ content: 'first question', role: 'user', type: 'message' },
				{ id: 'rs_5TJhsllGUlcO4HTAD6fJ2qrD', summary: [{ type: 'summary_text', text: 'Let me think about first question.' }], type: 'reasoning', encrypted_content: 'sbsig:' },
				{ type: 'message', content: [{ type: 'output_text', text: answer, annotations: [] }], role: 'assistant', id: 'msg_eHHXccIkuF117cfmBjCTq5Lm' },
				{ id: 'rs_wYyJJeUKQK1ZrUxM5UXUmKxk', summary: [], type: 'reasoning', encrypted_content: `sbsig:${tagSignature('gemini-text', textSignatureFor(answer))}` },
				{ content: 'second question', role: 'user', type: 'message' },
			],
			model: GEMINI_3,
			reasoning: { effort: 'low', summary: 'auto' },
			stream: true,
		}
		const res = await fetch(`${m.app.url}/v1/responses`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.key}`, 'user-agent': 'OpenAI/Python 3.22.1' },
			body: JSON.stringify(body),
		})
		expect(res.status).toBe(200)
		expect(await res.text()).toContain('"type":"response.completed"')
		expect(lastRequest(m.mocks.gemini).body.contents).toEqual([
			{ role: 'user', parts: [{ text: 'first question' }] },
			{ role: 'model', parts: [{ text: answer, thoughtSignature: textSignatureFor(answer) }] },
			{ role: 'user', parts: [{ text: 'second question' }] },
		])
	})
})

describe('ChatGoogleGenerativeAI with include_thoughts: Claude redacted thinking replayed', () => {
	// Claude's `redacted_thinking` reaches a Gemini client as an empty thought part whose `thoughtSignature` is
	// `cmVkYWN0ZWQ6` (base64 of `redacted:`) plus the data; google-genai for Python sends that back URL-safe too, and
	// Anthropic takes the data only as it issued it (standard base64: its docs' example "EmwKAhgBEgy3va3pzix/LafPsn4a…").
	it('should give Claude the redacted data back in standard base64', async () => {
		const acct = await m.account()
		const data = 'EmwKAhgBEgy3va3pzix/LafPsn4a+Q=='
		const model = { parts: [{ text: '', thought: true, thoughtSignature: asPythonBytes(`cmVkYWN0ZWQ6${data}`) }, { functionCall: { args: { city: 'Paris' }, name: 'get_weather' } }], role: 'model' }
		const results = { parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny in Paris' } } }], role: 'user' }
		const body = {
			contents: [{ parts: [{ text: ASK }], role: 'user' }, model, results],
			safetySettings: [],
			tools: [WEATHER],
			generationConfig: { temperature: 0.7, candidateCount: 1, thinkingConfig: { include_thoughts: true, thinking_budget: 2048 } },
		}
		expect((await gemini(acct, MODEL.anthropic, body)).status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.messages[1].content[0]).toEqual({ type: 'redacted_thinking', data })
	})
})
