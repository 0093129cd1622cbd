/**
 * Claude behind an application inference profile on a `bedrock` channel: the profile's ARN names no model, so the
 * channel's `settings.base_models` says which it serves; mapped to Claude, it goes over InvokeModel with Anthropic's
 * body (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-use.html: InvokeModel takes a profile's
 * ARN as modelId), Anthropic clients on the same-protocol fast path (the stream's bytes as Bedrock sent them, the model
 * name aside), OpenAI clients converted, the channel's guardrail in InvokeModel's headers. The same ARN on a channel
 * that does not say what it serves stays on Converse, whose body any model takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { BLOCKED_MESSAGE, type BedrockMock, countWords, startBedrockMock } from '../../mocks'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix } from './harness'

const REGION = 'us-east-1'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1wcm9maWxlcw=='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const PROFILE_ARN = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3'
const PROFILE_BASE = 'anthropic.claude-sonnet-4-5-20250929-v1:0'
/** The name Bedrock's Claude answers under (the mock's inner Anthropic model). */
const CLAUDE_NAME = 'claude-sonnet-4-5-20250929'
const GUARD_ID = 'gr7profileguard'
const TRIGGER = 'contraband'

/** The profile on a channel whose base_models maps it to Claude (API key). */
const MAPPED = 'claude-profile'
/** The same on an IAM channel with a guardrail. */
const GUARDED = 'claude-profile-guarded'
/** The same profile on a channel that does not say what it serves. */
const BARE = 'bare-profile'
const NAMES = [MAPPED, GUARDED, BARE]

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({
		apiKey: API_KEY,
		iam: IAM,
		region: REGION,
		models: [PROFILE_ARN],
		profiles: { [PROFILE_ARN]: PROFILE_BASE },
		guardrails: { [GUARD_ID]: { versions: ['1'], trigger: TRIGGER } },
	})
	for (const name of NAMES) PRICE[name] = { input: 3, output: 15 }
	const base_models = { [PROFILE_ARN]: PROFILE_BASE }
	m = await startMatrix({
		models: NAMES.map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 })),
		channels: (): GatewayConfig['channels'] => [
			{ name: 'ap-br', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [MAPPED], model_map: { [MAPPED]: PROFILE_ARN }, settings: { base_models } },
			{
				name: 'ap-br-guarded',
				type: 'bedrock',
				base_url: br.url,
				api_key: `${IAM.accessKeyId}:${IAM.secretAccessKey}`,
				models: [GUARDED],
				model_map: { [GUARDED]: PROFILE_ARN },
				settings: { region: REGION, base_models, guardrail_identifier: GUARD_ID, guardrail_version: '1' },
			},
			{ name: 'ap-br-bare', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [BARE], model_map: { [BARE]: PROFILE_ARN } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const last = () => lastRequest(br)

const ENCODED = encodeURIComponent(PROFILE_ARN)

const ask = (proto: Protocol, acct: Account, model: string, text: string, stream: boolean) =>
	proto === 'chat'
		? chat(acct.openai, { model, messages: [{ role: 'user', content: text }] }, stream)
		: messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: text }] } as never, stream)

/** AWS event-stream messages (length-prefixed, CRC-checked by the mock's writer) → Bedrock's Claude events as SSE. */
function eventStreamAsSse(bytes: Uint8Array): string {
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
	let out = ''
	for (let at = 0; at < bytes.length; ) {
		const total = view.getUint32(at)
		const head = view.getUint32(at + 4)
		const payload = JSON.parse(Buffer.from(bytes.subarray(at + 12 + head, at + total - 4)).toString('utf8')) as { bytes: string }
		const event = Buffer.from(payload.bytes, 'base64').toString('utf8')
		out += `event: ${(JSON.parse(event) as { type: string }).type}\ndata: ${event}\n\n`
		at += total
	}
	return out
}

/** The same body sent to the mock directly, as Bedrock answers it. */
const direct = (body: string, stream: boolean) =>
	fetch(`${br.url}/model/${ENCODED}/${stream ? 'invoke-with-response-stream' : 'invoke'}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
		body,
	})

describe('bedrock application inference profile mapped to Claude', () => {
	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should send ${proto} clients over InvokeModel at the profile's ARN with Anthropic's body, and bill it (${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, MAPPED, 'hello profile', stream)
				expect(a.text).toBe('Hello! You said: hello profile')
				expect(a.stop).toBe(proto === 'chat' ? 'stop' : 'end_turn')
				const r = last()
				expect(r.path).toBe(`/model/${ENCODED}/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
				expect(r.body.anthropic_version).toBe('bedrock-2023-05-31')
				expect(r.body.model).toBeUndefined()
				expect(r.body.stream).toBeUndefined()
				expect(r.body.messages).toEqual([{ role: 'user', content: proto === 'chat' ? [{ type: 'text', text: 'hello profile' }] : 'hello profile' }])
				// An OpenAI client named no cap: the maximum of the model the profile serves (Sonnet 4.5: 64,000), known from base_models.
				expect(r.body.max_tokens).toBe(proto === 'chat' ? 64_000 : 256)
				await expectCharges(m, acct, [{ model: MAPPED, input: countWords('hello profile'), output: countWords(a.text), stream }])
			})

	it("should relay Bedrock's stream to the Anthropic SDK byte for byte, the model name aside, and send the client's body as it wrote it", async () => {
		const acct = await m.account()
		const params = {
			model: MAPPED,
			max_tokens: 4096,
			stream: true as const,
			system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }],
			thinking: { type: 'enabled' as const, budget_tokens: 2048 },
			messages: [{ role: 'user' as const, content: 'think about bytes' }],
		}
		const res = await acct.anthropic.messages.create(params).asResponse()
		expect(res.headers.get('content-type')).toStartWith('text/event-stream')
		const got = await res.text()
		const sent = last()
		expect(sent.path).toBe(`/model/${ENCODED}/invoke-with-response-stream`)
		// Anthropic's own fields, as the client wrote them: no Converse cachePoint, no additionalModelRequestFields.
		const { model: _m, stream: _s, ...asWritten } = params
		expect(sent.body).toEqual({ ...asWritten, anthropic_version: 'bedrock-2023-05-31' })
		const upstream = await direct(sent.text!, true)
		expect(upstream.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
		const expected = eventStreamAsSse(new Uint8Array(await upstream.arrayBuffer()))
		expect(expected).toContain('"type":"thinking_delta"')
		expect(expected).toContain(`"model":"${CLAUDE_NAME}"`)
		expect(got).toBe(expected.replace(`"model":"${CLAUDE_NAME}"`, `"model":"${MAPPED}"`))
	})

	it("should answer the Anthropic SDK's whole request with Bedrock's answer as it came, the model name aside", async () => {
		const acct = await m.account()
		const got = await (await acct.anthropic.messages.create({ model: MAPPED, max_tokens: 64, top_k: 40, messages: [{ role: 'user', content: 'whole please' }] } as never).asResponse()).text()
		expect(JSON.parse(got).content).toEqual([{ type: 'text', text: 'Hello! You said: whole please' }])
		const sent = last()
		expect(sent.path).toBe(`/model/${ENCODED}/invoke`)
		expect(sent.body).toEqual({ max_tokens: 64, top_k: 40, messages: [{ role: 'user', content: 'whole please' }], anthropic_version: 'bedrock-2023-05-31' })
		const upstream = await (await direct(sent.text!, false)).text()
		expect(upstream).toContain(`"model":"${CLAUDE_NAME}"`)
		expect(got).toBe(upstream.replace(`"model":"${CLAUDE_NAME}"`, `"model":"${MAPPED}"`))
	})

	for (const stream of [false, true])
		it(`should give Anthropic clients Claude's own stop_sequence and OpenAI clients its finish reason (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const c = await messages(acct.anthropic, { model: MAPPED, max_tokens: 64, stop_sequences: ['STOP'], messages: [{ role: 'user', content: 'stop me #stop' }] }, stream)
			expect(last().body.stop_sequences).toEqual(['STOP'])
			expect([c.stop, c.stopSequence]).toEqual(['stop_sequence', 'STOP'])
			const o = await chat(acct.openai, { model: MAPPED, stop: ['STOP'], messages: [{ role: 'user', content: 'stop me #stop' }] }, stream)
			expect(last().path).toBe(`/model/${ENCODED}/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
			expect(o.stop).toBe('stop')
		})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should send the channel's guardrail in InvokeModel's signed headers and answer its intervention as a content filter (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, GUARDED, 'hello guarded profile', stream)
				expect(a.text).toBe('Hello! You said: hello guarded profile')
				const r = last()
				expect(r.path).toBe(`/model/${ENCODED}/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
				expect(r.headers['x-amzn-bedrock-guardrailidentifier']).toBe(GUARD_ID)
				expect(r.headers['x-amzn-bedrock-guardrailversion']).toBe('1')
				expect(r.headers.authorization).toContain('x-amzn-bedrock-guardrailidentifier;x-amzn-bedrock-guardrailversion')
				expect(r.body.guardrailConfig).toBeUndefined()
				const b = await ask(proto, acct, GUARDED, `bring the ${TRIGGER}`, stream)
				expect(b.stop).toBe(proto === 'chat' ? 'content_filter' : 'refusal')
				expect(b.text).toBe(BLOCKED_MESSAGE)
			})
})

describe("the console's Test call of a profile", () => {
	it('should test a profile mapped to Claude over InvokeModel (signed, with the guardrail), and an unmapped one over Converse', async () => {
		const list = (await m.app.admin('/api/channels')).body.data as { id: number; name: string }[]
		const test = (name: string, model: string) => m.app.admin(`/api/channels/${list.find((c) => c.name === name)!.id}/test`, { method: 'POST', body: { model } })
		expect((await test('ap-br-guarded', GUARDED)).body).toMatchObject({ ok: true, testable: true, status: 200 })
		expect(last().path).toBe(`/model/${ENCODED}/invoke`)
		expect(last().body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 1 })
		expect(last().headers['x-amzn-bedrock-guardrailidentifier']).toBe(GUARD_ID)
		expect((await test('ap-br-bare', BARE)).body).toMatchObject({ ok: true, testable: true, status: 200 })
		expect(last().path).toBe(`/model/${ENCODED}/converse`)
	})
})

describe('bedrock application inference profile of unknown model', () => {
	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should stay on Converse, whose body any model takes (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, BARE, 'hello bare profile', stream)
				expect(a.text).toBe('Hello! You said: hello bare profile')
				const r = last()
				expect(r.path).toBe(`/model/${ENCODED}/${stream ? 'converse-stream' : 'converse'}`)
				expect(r.body.anthropic_version).toBeUndefined()
				expect(r.body.messages).toEqual([{ role: 'user', content: [{ text: 'hello bare profile' }] }])
			})
})
