/**
 * Amazon Bedrock guardrails on `bedrock` channels (settings.guardrail_*) through the official SDKs: Claude over
 * InvokeModel takes the guardrail in its headers (signed with SigV4 on an IAM channel), every other model over
 * Converse in `guardrailConfig`; when the guardrail intervenes (the mock's trigger word), each client protocol reads
 * its own content-filter stop reason (Anthropic `refusal`, OpenAI `content_filter`, Gemini `SAFETY`), whole and
 * streamed, the input is still charged, and the guardrail's trace never reaches the client. A guardrail scanning
 * Claude's answer: in sync mode (Bedrock's default) the stream is the blocked message alone; in async mode
 * (`guardrail_stream_mode: async`, sent in InvokeModelWithResponseStream's body) the model's text streams and the
 * stream then ends as a content filter. A guardrail the AWS account enforces, which no channel names, is read the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { BLOCKED_MESSAGE, type BedrockMock, countWords, startBedrockMock } from '../../mocks'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix } from './harness'

const REGION = 'eu-west-1'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1ndWFyZHJhaWw='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const CLAUDE_ID = 'eu.anthropic.claude-sonnet-4-6-v1:0'
const NOVA_ID = 'eu.amazon.nova-pro-v1:0'
const GUARD_ID = 'gr7mockguard01'
const GUARD_ARN = 'arn:aws:bedrock:eu-west-1:111122223333:guardrail/gr7mockguard02'
const TRIGGER = 'contraband'
/** The word the channels' guardrails block in Claude's answers (the mock's Claude says back what it was told). */
const OUT_TRIGGER = 'classified'
/** The account's enforced guardrail and its word. */
const ENFORCED_ID = 'gr7enforced03'
const ENFORCED_TRIGGER = 'embargoed'

/** On the API key channel (guardrail by id, no trace asked). */
const CLAUDE = 'claude-guarded'
const NOVA = 'nova-guarded'
/** On the IAM channel (guardrail by ARN, full trace asked, async stream mode). */
const CLAUDE_IAM = 'claude-guarded-iam'
const NOVA_IAM = 'nova-guarded-iam'
/** A channel without a guardrail: nothing is sent, nothing intervenes. */
const CLAUDE_FREE = 'claude-free'
const NOVA_FREE = 'nova-free'
const NAMES = [CLAUDE, NOVA, CLAUDE_IAM, NOVA_IAM, CLAUDE_FREE, NOVA_FREE]

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({
		apiKey: API_KEY,
		iam: IAM,
		region: REGION,
		models: [CLAUDE_ID, NOVA_ID],
		guardrails: {
			[GUARD_ID]: { versions: ['1', '2'], trigger: TRIGGER, outputTrigger: OUT_TRIGGER },
			[GUARD_ARN]: { versions: ['DRAFT'], trigger: TRIGGER, outputTrigger: OUT_TRIGGER },
			[ENFORCED_ID]: { versions: ['4'], trigger: ENFORCED_TRIGGER },
		},
		enforced: ENFORCED_ID,
	})
	for (const name of NAMES) PRICE[name] = { input: 3, output: 15 }
	m = await startMatrix({
		models: NAMES.map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 })),
		channels: (): GatewayConfig['channels'] => [
			{
				name: 'br-guarded',
				type: 'bedrock',
				base_url: br.url,
				api_key: API_KEY,
				models: [CLAUDE, NOVA],
				model_map: { [CLAUDE]: CLAUDE_ID, [NOVA]: NOVA_ID },
				settings: { guardrail_identifier: GUARD_ID, guardrail_version: '2' },
			},
			{
				name: 'br-guarded-iam',
				type: 'bedrock',
				base_url: br.url,
				api_key: `${IAM.accessKeyId}:${IAM.secretAccessKey}`,
				models: [CLAUDE_IAM, NOVA_IAM],
				model_map: { [CLAUDE_IAM]: CLAUDE_ID, [NOVA_IAM]: NOVA_ID },
				settings: { region: REGION, guardrail_identifier: GUARD_ARN, guardrail_version: 'DRAFT', guardrail_trace: 'enabled_full', guardrail_stream_mode: 'async' },
			},
			{ name: 'br-free', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [CLAUDE_FREE, NOVA_FREE], model_map: { [CLAUDE_FREE]: CLAUDE_ID, [NOVA_FREE]: NOVA_ID } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const last = () => lastRequest(br)

const ask = (proto: Protocol, acct: Account, model: string, text: string, stream: boolean) =>
	proto === 'chat'
		? chat(acct.openai, { model, messages: [{ role: 'user', content: text }] }, stream)
		: messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: text }] } as never, stream)

/** The SignedHeaders of a SigV4 `Authorization` header. */
const signedHeaders = (auth: string | undefined) => /SignedHeaders=([a-z0-9;-]+)/.exec(auth ?? '')?.[1]?.split(';') ?? []

const GUARD_HEADERS = ['x-amzn-bedrock-guardrailidentifier', 'x-amzn-bedrock-guardrailversion', 'x-amzn-bedrock-trace']

describe('bedrock guardrails', () => {
	for (const proto of PROTOCOLS)
		for (const stream of [false, true]) {
			const mode = stream ? 'stream' : 'non-stream'
			it(`should send Claude's guardrail in InvokeModel's headers and answer as usual when it lets the prompt pass (${proto}, ${mode})`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, CLAUDE, 'hello guarded claude', stream)
				expect(a.text).toBe('Hello! You said: hello guarded claude')
				expect(a.stop).toBe(proto === 'chat' ? 'stop' : 'end_turn')
				const r = last()
				expect(r.path).toEndWith(stream ? '/invoke-with-response-stream' : '/invoke')
				expect(r.headers['x-amzn-bedrock-guardrailidentifier']).toBe(GUARD_ID)
				expect(r.headers['x-amzn-bedrock-guardrailversion']).toBe('2')
				expect(r.headers['x-amzn-bedrock-trace']).toBeUndefined()
				// The body stays Claude's: the guardrail is in the headers only.
				expect(Object.keys(r.body).filter((k) => k.includes('guardrail'))).toEqual([])
			})

			it(`should answer Claude's intervened InvokeModel as a content filter (${proto}, ${mode}), charging the input`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, CLAUDE, `tell me about ${TRIGGER} please`, stream)
				expect(a.text).toBe(BLOCKED_MESSAGE)
				expect(a.stop).toBe(proto === 'chat' ? 'content_filter' : 'refusal')
				const input = countWords(`tell me about ${TRIGGER} please`)
				expect(a.usage).toMatchObject({ input, output: 0 })
				await expectCharges(m, acct, [{ model: CLAUDE, input, output: 0, stream }])
			})

			it(`should send a non-Claude model's guardrail as Converse's guardrailConfig and answer its intervention as a content filter (${proto}, ${mode})`, async () => {
				const acct = await m.account()
				const ok = await ask(proto, acct, NOVA, 'hello guarded nova', stream)
				expect(ok.text).toBe('Hello! You said: hello guarded nova')
				expect(last().path).toEndWith(stream ? '/converse-stream' : '/converse')
				expect(last().body.guardrailConfig).toEqual({ guardrailIdentifier: GUARD_ID, guardrailVersion: '2' })
				expect(last().headers['x-amzn-bedrock-guardrailidentifier']).toBeUndefined()
				const a = await ask(proto, acct, NOVA, `any ${TRIGGER} here`, stream)
				expect(a.text).toBe(BLOCKED_MESSAGE)
				expect(a.stop).toBe(proto === 'chat' ? 'content_filter' : 'refusal')
				await expectCharges(m, acct, [
					{ model: NOVA, input: countWords('hello guarded nova'), output: countWords(ok.text), stream },
					{ model: NOVA, input: countWords(`any ${TRIGGER} here`), output: 0, stream },
				])
			})
		}

	it('should sign the guardrail headers with SigV4 and ask the trace in InvokeModel words; Converse gets them lower case, the stream mode on streams only', async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const a = await ask('messages', acct, CLAUDE_IAM, 'hello signed guard', stream)
			expect(a.text).toBe('Hello! You said: hello signed guard')
			const r = last()
			expect(r.headers['x-amzn-bedrock-guardrailidentifier']).toBe(GUARD_ARN)
			expect(r.headers['x-amzn-bedrock-guardrailversion']).toBe('DRAFT')
			expect(r.headers['x-amzn-bedrock-trace']).toBe('ENABLED_FULL')
			expect(signedHeaders(r.headers.authorization)).toEqual(expect.arrayContaining(GUARD_HEADERS))
		}
		// The async stream mode goes in the streamed InvokeModel's body (signed with it: the mock checks the signature).
		expect(last().body['amazon-bedrock-guardrailConfig']).toEqual({ streamProcessingMode: 'ASYNCHRONOUS' })
		await ask('messages', acct, CLAUDE_IAM, 'hello signed guard', false)
		expect(last().body['amazon-bedrock-guardrailConfig']).toBeUndefined()
		await ask('chat', acct, NOVA_IAM, 'hello converse guard', false)
		expect(last().body.guardrailConfig).toEqual({ guardrailIdentifier: GUARD_ARN, guardrailVersion: 'DRAFT', trace: 'enabled_full' })
		await ask('chat', acct, NOVA_IAM, 'hello converse guard', true)
		expect(last().body.guardrailConfig).toEqual({ guardrailIdentifier: GUARD_ARN, guardrailVersion: 'DRAFT', trace: 'enabled_full', streamProcessingMode: 'async' })
	})

	it("should not forward the guardrail's trace or action to an Anthropic client on the fast path, whole or streamed", async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const res = await fetch(`${m.app.url}/v1/messages`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' },
				body: JSON.stringify({ model: CLAUDE_IAM, max_tokens: 64, stream, messages: [{ role: 'user', content: `${TRIGGER} again` }] }),
			})
			expect(res.status).toBe(200)
			const text = await res.text()
			// The mock did trace it (full trace asked): the words are Bedrock's, kept from the caller.
			expect(br.requests.at(-1)!.headers['x-amzn-bedrock-trace']).toBe('ENABLED_FULL')
			expect(text).toContain(BLOCKED_MESSAGE)
			expect(text).not.toContain('amazon-bedrock-trace')
			expect(text).not.toContain('amazon-bedrock-guardrailAction')
			expect(text).not.toContain('Mock denied topic')
			expect(text).not.toContain(GUARD_ARN)
			expect(text).toContain('"stop_reason":"refusal"')
		}
	})

	it("should answer a Gemini client's intervened Claude and Converse calls with finishReason SAFETY, whole and streamed", async () => {
		const acct = await m.account()
		const g = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		for (const model of [CLAUDE_IAM, NOVA_IAM]) {
			const whole = await g.models.generateContent({ model, contents: `no ${TRIGGER} talk` })
			expect(whole.text).toBe(BLOCKED_MESSAGE)
			expect(whole.candidates?.[0]?.finishReason).toBe('SAFETY' as never)
			let text = ''
			let finish: string | undefined
			for await (const c of await g.models.generateContentStream({ model, contents: `no ${TRIGGER} talk` })) {
				text += c.text ?? ''
				finish = c.candidates?.[0]?.finishReason ?? finish
			}
			expect(text).toBe(BLOCKED_MESSAGE)
			expect(finish).toBe('SAFETY')
		}
	})

	it("should answer a Responses client's intervened call with a refusal part (Claude) or as an incomplete response (Converse)", async () => {
		const acct = await m.account()
		const ask = async (model: string) => {
			const res = await fetch(`${m.app.url}/v1/responses`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.key}` },
				body: JSON.stringify({ model, input: `a ${TRIGGER} question` }),
			})
			expect(res.status).toBe(200)
			return (await res.json()) as { status: string; incomplete_details: unknown; output: Array<{ type: string; content?: Array<Record<string, string>> }> }
		}
		const claude = await ask(CLAUDE)
		expect(claude.status).toBe('completed')
		// The blocked message came as Claude's text, then its refusal: the text kept, a refusal part after it, as a stream of
		// the same answer ends (it streams the text before it learns of the refusal).
		expect(claude.output.at(-1)!.content).toMatchObject([{ type: 'output_text', text: BLOCKED_MESSAGE }, { type: 'refusal', refusal: '' }])
		const nova = await ask(NOVA)
		expect(nova.status).toBe('incomplete')
		expect(nova.incomplete_details).toEqual({ reason: 'content_filter' })
		expect(JSON.stringify(nova.output)).toContain(BLOCKED_MESSAGE)
	})

	for (const proto of PROTOCOLS)
		it(`should stream Claude's text in async mode and end the stream as a content filter when the guardrail intervenes on the answer (${proto})`, async () => {
			const acct = await m.account()
			const prompt = `say ${OUT_TRIGGER} things`
			const a = await ask(proto, acct, CLAUDE_IAM, prompt, true)
			// The model's text up to where the guardrail caught it went out; then the stream ended as a content filter.
			expect(a.text).toStartWith('Hello! You said: say')
			expect(a.text.toLowerCase()).toContain(OUT_TRIGGER)
			expect(a.text).not.toContain(BLOCKED_MESSAGE)
			expect(a.stop).toBe(proto === 'chat' ? 'content_filter' : 'refusal')
			expect(last().body['amazon-bedrock-guardrailConfig']).toEqual({ streamProcessingMode: 'ASYNCHRONOUS' })
			// The model was called: its tokens are billed.
			const output = countWords(`Hello! You said: ${prompt}`)
			expect(a.usage).toMatchObject({ input: countWords(prompt), output })
			await expectCharges(m, acct, [{ model: CLAUDE_IAM, input: countWords(prompt), output, stream: true }])
		})

	it("should give a Gemini client the async stream's text and finishReason SAFETY; in sync mode the blocked message alone", async () => {
		const acct = await m.account()
		const g = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		const streamed = async (model: string) => {
			let text = ''
			let finish: string | undefined
			for await (const c of await g.models.generateContentStream({ model, contents: `any ${OUT_TRIGGER} files` })) {
				text += c.text ?? ''
				finish = c.candidates?.[0]?.finishReason ?? finish
			}
			return { text, finish }
		}
		const async = await streamed(CLAUDE_IAM)
		expect(async.text).toStartWith('Hello! You said: any')
		expect(async.finish).toBe('SAFETY')
		const sync = await streamed(CLAUDE)
		expect(last().body['amazon-bedrock-guardrailConfig']).toBeUndefined()
		expect(sync.text).toBe(BLOCKED_MESSAGE)
		expect(sync.finish).toBe('SAFETY')
	})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should answer an intervention of a guardrail the account enforces as a content filter on a channel without guardrail settings (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const prompt = `an ${ENFORCED_TRIGGER} shipment`
				const claude = await ask(proto, acct, CLAUDE_FREE, prompt, stream)
				for (const h of GUARD_HEADERS) expect(last().headers[h]).toBeUndefined()
				const nova = await ask(proto, acct, NOVA_FREE, prompt, stream)
				expect(last().body.guardrailConfig).toBeUndefined()
				for (const a of [claude, nova]) {
					expect(a.text).toBe(BLOCKED_MESSAGE)
					expect(a.stop).toBe(proto === 'chat' ? 'content_filter' : 'refusal')
				}
				const input = countWords(prompt)
				await expectCharges(m, acct, [
					{ model: CLAUDE_FREE, input, output: 0, stream },
					{ model: NOVA_FREE, input, output: 0, stream },
				])
			})

	it("should keep an enforced guardrail's action from an Anthropic client on the fast path, and give a Gemini client finishReason SAFETY", async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const res = await fetch(`${m.app.url}/v1/messages`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' },
				body: JSON.stringify({ model: CLAUDE_FREE, max_tokens: 64, stream, messages: [{ role: 'user', content: `${ENFORCED_TRIGGER} goods` }] }),
			})
			const text = await res.text()
			expect(text).toContain(BLOCKED_MESSAGE)
			expect(text).not.toContain('amazon-bedrock-guardrailAction')
			expect(text).toContain('"stop_reason":"refusal"')
		}
		const g = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		for (const model of [CLAUDE_FREE, NOVA_FREE]) {
			const whole = await g.models.generateContent({ model, contents: `no ${ENFORCED_TRIGGER} talk` })
			expect(whole.text).toBe(BLOCKED_MESSAGE)
			expect(whole.candidates?.[0]?.finishReason).toBe('SAFETY' as never)
		}
	})

	it('should send no guardrail from a channel without one (the prompt reaches the model)', async () => {
		const acct = await m.account()
		const a = await ask('messages', acct, CLAUDE_FREE, `free ${TRIGGER} talk`, true)
		expect(a.text).toBe(`Hello! You said: free ${TRIGGER} talk`)
		expect(a.stop).toBe('end_turn')
		for (const h of GUARD_HEADERS) expect(last().headers[h]).toBeUndefined()
	})
})
