/**
 * An application inference profile's ARN on a `bedrock` channel whose `settings.base_models` does not list it: the
 * gateway asks Bedrock's control plane which model it serves (GetInferenceProfile, with the channel's credentials),
 * once per channel and profile. Claude's then go over InvokeModel with Anthropic's body (the fast path, the stream and
 * the thinking signature byte for byte), others stay on Converse with their family's fields; a refused lookup
 * (no bedrock:GetInferenceProfile) keeps Converse and is made again only after a minute; a base_models entry is never
 * looked up; concurrent first requests share one lookup.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setSystemTime } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, startBedrockMock, thinkingSignature } from '../../mocks'
import { chat, messages } from './clients'
import { lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix } from './harness'

const REGION = 'us-east-1'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1sb29rdXBz'
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const arn = (id: string) => `arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/${id}`
/** Claude behind a profile copied from the US cross-region profile (the lookup names the model in three regions). */
const CLAUDE_ARN = arn('claudelearnt1')
const CLAUDE_BASE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
/** The name Bedrock's Claude answers under (the mock's inner Anthropic model). */
const CLAUDE_NAME = 'claude-sonnet-4-5-20250929'
const NOVA_ARN = arn('novalearnt1')
const DENIED_ARN = arn('deniedlookup1')
const MAPPED_ARN = arn('mappedprofile1')
const BURST_ARN = arn('burstprofile1')
const COUNT_ARN = arn('countprofile1')
const TESTED_ARN = arn('testedprofile1')

/** Gateway model names: one channel and profile each, so each test starts with nothing learnt. */
const CLAUDE = 'claude-learnt'
const NOVA = 'nova-learnt'
const DENIED = 'denied-profile'
const MAPPED = 'mapped-profile'
const BURST = 'burst-profile'
const COUNTED = 'counted-profile'
const TESTED = 'tested-profile'
const NAMES = [CLAUDE, NOVA, DENIED, MAPPED, BURST, COUNTED, TESTED]

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({
		apiKey: API_KEY,
		iam: IAM,
		region: REGION,
		models: [CLAUDE_ARN, NOVA_ARN, DENIED_ARN, MAPPED_ARN, BURST_ARN, COUNT_ARN, TESTED_ARN, CLAUDE_BASE],
		profiles: {
			[CLAUDE_ARN]: CLAUDE_BASE,
			[NOVA_ARN]: 'amazon.nova-pro-v1:0',
			[DENIED_ARN]: CLAUDE_BASE,
			[MAPPED_ARN]: CLAUDE_BASE,
			[BURST_ARN]: CLAUDE_BASE,
			[COUNT_ARN]: CLAUDE_BASE,
			[TESTED_ARN]: CLAUDE_BASE,
		},
	})
	for (const name of NAMES) PRICE[name] = { input: 3, output: 15 }
	// The mock stands for both the runtime and the control plane: a base_url that is not AWS's names no control plane.
	const control = { control_plane_url: br.url }
	const keyed = (name: string, model: string, profile: string, settings: Record<string, unknown> = {}) => ({
		name,
		type: 'bedrock' as const,
		base_url: br.url,
		api_key: API_KEY,
		models: [model],
		model_map: { [model]: profile },
		settings: { ...control, ...settings },
	})
	m = await startMatrix({
		models: NAMES.map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 })),
		channels: (): GatewayConfig['channels'] => [
			// IAM keys: the lookup is signed (SigV4, service bedrock) as the runtime calls are, and the mock checks it.
			{ ...keyed('lk-claude', CLAUDE, CLAUDE_ARN, { region: REGION }), api_key: `${IAM.accessKeyId}:${IAM.secretAccessKey}` },
			keyed('lk-nova', NOVA, NOVA_ARN),
			keyed('lk-denied', DENIED, DENIED_ARN),
			keyed('lk-mapped', MAPPED, MAPPED_ARN, { base_models: { [MAPPED_ARN]: 'anthropic.claude-sonnet-4-5-20250929-v1:0' } }),
			keyed('lk-burst', BURST, BURST_ARN),
			keyed('lk-counted', COUNTED, COUNT_ARN),
			keyed('lk-tested', TESTED, TESTED_ARN),
		],
	})
}, SETUP_MS)
afterAll(async () => {
	setSystemTime()
	await m.close()
	await br.stop()
})
afterEach(() => {
	br.lookupDenied = false
	br.lookupDelayMs = 0
})

const last = () => lastRequest(br)
/** GetInferenceProfile calls for one profile. */
const lookupsOf = (profile: string) => br.requests.filter((r) => r.path === `/inference-profiles/${encodeURIComponent(profile)}`).length
const runtimeCalls = (profile: string) => br.requests.filter((r) => r.path.startsWith(`/model/${encodeURIComponent(profile)}/`)).map((r) => r.path.slice(r.path.lastIndexOf('/') + 1))

/** AWS event-stream messages → Bedrock's Claude events as SSE. */
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

/** The same body sent to the mock directly (with its API key), as Bedrock answers it. */
const direct = (profile: string, body: string, stream: boolean) =>
	fetch(`${br.url}/model/${encodeURIComponent(profile)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
		body,
	})

const thinkingParams = (model: string) => ({
	model,
	max_tokens: 4096,
	thinking: { type: 'enabled' as const, budget_tokens: 2048 },
	system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
	messages: [{ role: 'user' as const, content: 'think about bytes' }],
})

describe('an unmapped application inference profile that serves Claude', () => {
	it("should learn its model from GetInferenceProfile (signed) at the first request, and relay Bedrock's stream to the Anthropic SDK byte for byte, signature included", async () => {
		const acct = await m.account()
		const params = thinkingParams(CLAUDE)
		const res = await acct.anthropic.messages.create({ ...params, stream: true }).asResponse()
		const got = await res.text()
		expect(lookupsOf(CLAUDE_ARN)).toBe(1)
		const lookup = br.requests.find((r) => r.path.startsWith('/inference-profiles/'))!
		expect(lookup.method).toBe('GET')
		expect(lookup.headers.authorization).toStartWith(`AWS4-HMAC-SHA256 Credential=${IAM.accessKeyId}/`)
		expect(lookup.headers.authorization).toContain(`/${REGION}/bedrock/aws4_request`)
		const sent = last()
		expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE_ARN)}/invoke-with-response-stream`)
		// Anthropic's own body as the client wrote it: no Converse cachePoint, no additionalModelRequestFields.
		const { model: _m, ...asWritten } = params
		expect(sent.body).toEqual({ ...asWritten, anthropic_version: 'bedrock-2023-05-31' })
		const expected = eventStreamAsSse(new Uint8Array(await (await direct(CLAUDE_ARN, sent.text!, true)).arrayBuffer()))
		expect(expected).toContain('"type":"signature_delta"')
		expect(got).toBe(expected.replace(`"model":"${CLAUDE_NAME}"`, `"model":"${CLAUDE}"`))
	})

	it("should answer the Anthropic SDK's whole request with Bedrock's answer as it came, thinking signature included, without asking again", async () => {
		const acct = await m.account()
		const r = await acct.anthropic.messages.create(thinkingParams(CLAUDE)).asResponse()
		const got = await r.text()
		expect(last().path).toBe(`/model/${encodeURIComponent(CLAUDE_ARN)}/invoke`)
		const upstream = await (await direct(CLAUDE_ARN, last().text!, false)).text()
		expect(got).toBe(upstream.replace(`"model":"${CLAUDE_NAME}"`, `"model":"${CLAUDE}"`))
		const thinking = (JSON.parse(got) as { content: Array<{ type: string; thinking?: string; signature?: string }> }).content.find((b) => b.type === 'thinking')!
		expect(thinking.signature).toBe(thinkingSignature(thinking.thinking!))
		expect(lookupsOf(CLAUDE_ARN)).toBe(1)
	})

	for (const stream of [false, true])
		it(`should send an OpenAI client over InvokeModel with the learnt model's output cap (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: CLAUDE, messages: [{ role: 'user', content: 'hello learnt profile' }] }, stream)
			expect(a.text).toBe('Hello! You said: hello learnt profile')
			expect(last().path).toBe(`/model/${encodeURIComponent(CLAUDE_ARN)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
			expect(last().body.anthropic_version).toBe('bedrock-2023-05-31')
			// Claude Sonnet 4.5's maximum (64,000), known from the model Bedrock named.
			expect(last().body.max_tokens).toBe(64_000)
			expect(lookupsOf(CLAUDE_ARN)).toBe(1)
		})
})

describe('an unmapped application inference profile that serves another model', () => {
	it("should stay on Converse, with the learnt model's family fields (Nova's topK)", async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const a = await messages(acct.anthropic, { model: NOVA, max_tokens: 64, top_k: 40, messages: [{ role: 'user', content: 'hello nova profile' }] } as never, stream)
			expect(a.text).toBe('Hello! You said: hello nova profile')
			expect(last().path).toBe(`/model/${encodeURIComponent(NOVA_ARN)}/${stream ? 'converse-stream' : 'converse'}`)
			expect(last().body.additionalModelRequestFields).toEqual({ inferenceConfig: { topK: 40 } })
		}
		expect(lookupsOf(NOVA_ARN)).toBe(1)
	})
})

describe('a lookup Bedrock refuses', () => {
	it('should keep Converse, ask again only once the failure has expired, then go over InvokeModel', async () => {
		const acct = await m.account()
		br.lookupDenied = true
		const ask = () => messages(acct.anthropic, { model: DENIED, max_tokens: 64, messages: [{ role: 'user', content: 'hello denied' }] }, false)
		for (let i = 0; i < 3; i++) expect((await ask()).text).toBe('Hello! You said: hello denied')
		expect(lookupsOf(DENIED_ARN)).toBe(1)
		expect(runtimeCalls(DENIED_ARN)).toEqual(['converse', 'converse', 'converse'])
		try {
			setSystemTime(new Date(Date.now() + 59_000))
			await ask()
			expect(lookupsOf(DENIED_ARN)).toBe(1)
			// Still refused when it expires: asked once more, and Converse again.
			setSystemTime(new Date(Date.now() + 2_000))
			await ask()
			expect(lookupsOf(DENIED_ARN)).toBe(2)
			expect(runtimeCalls(DENIED_ARN).at(-1)).toBe('converse')
			// The role given the permission: the next lookup, a minute on, learns the model.
			br.lookupDenied = false
			await ask()
			expect(lookupsOf(DENIED_ARN)).toBe(2)
			setSystemTime(new Date(Date.now() + 61_000))
			expect((await ask()).text).toBe('Hello! You said: hello denied')
			expect(lookupsOf(DENIED_ARN)).toBe(3)
			expect(runtimeCalls(DENIED_ARN).at(-1)).toBe('invoke')
			// The model's limits, derived from the bare ARN while it was unknown, are the learnt model's now (Sonnet 4.5: 64,000).
			await chat(acct.openai, { model: DENIED, messages: [{ role: 'user', content: 'hello denied' }] }, false)
			expect(last().path).toBe(`/model/${encodeURIComponent(DENIED_ARN)}/invoke`)
			expect(last().body.max_tokens).toBe(64_000)
		} finally {
			setSystemTime()
		}
	})
})

describe('a profile base_models lists', () => {
	it('should never be looked up: the entry wins', async () => {
		const acct = await m.account()
		for (const stream of [false, true]) await messages(acct.anthropic, { model: MAPPED, max_tokens: 64, messages: [{ role: 'user', content: 'hello mapped' }] }, stream)
		expect(runtimeCalls(MAPPED_ARN)).toEqual(['invoke', 'invoke-with-response-stream'])
		expect(lookupsOf(MAPPED_ARN)).toBe(0)
	})
})

describe('concurrent first requests', () => {
	it('should share one lookup, and all go over InvokeModel', async () => {
		const acct = await m.account()
		br.lookupDelayMs = 300
		const asks = [false, true, false, true, false].map((stream, i) =>
			messages(acct.anthropic, { model: BURST, max_tokens: 64, messages: [{ role: 'user', content: `hello burst ${i}` }] }, stream),
		)
		const answers = await Promise.all(asks)
		expect(answers.map((a) => a.text)).toEqual([0, 1, 2, 3, 4].map((i) => `Hello! You said: hello burst ${i}`))
		expect(lookupsOf(BURST_ARN)).toBe(1)
		expect(runtimeCalls(BURST_ARN).sort()).toEqual(['invoke', 'invoke', 'invoke', 'invoke-with-response-stream', 'invoke-with-response-stream'])
	})
})

describe('the first call for an unmapped profile that is not a chat', () => {
	it("should learn the model for a token count too: Claude's counted by Bedrock's CountTokens, by the foundation model's id", async () => {
		const acct = await m.account()
		const params = { model: COUNTED, system: 'you count', messages: [{ role: 'user' as const, content: 'how many tokens is this' }] }
		const { data, response } = await acct.anthropic.messages.countTokens(params).withResponse()
		expect(response.headers.get('x-switchboard-counted-by')).toBe('bedrock')
		expect(last().path).toBe(`/model/${encodeURIComponent('anthropic.claude-sonnet-4-5-20250929-v1:0')}/count-tokens`)
		expect(data.input_tokens).toBe(7)
		expect(lookupsOf(COUNT_ARN)).toBe(1)
	})

	it("should learn it for the console's Test call, which then tests Claude over InvokeModel", async () => {
		const list = (await m.app.admin('/api/channels')).body.data as { id: number; name: string }[]
		const r = await m.app.admin(`/api/channels/${list.find((c) => c.name === 'lk-tested')!.id}/test`, { method: 'POST', body: { model: TESTED } })
		expect(r.body).toMatchObject({ ok: true, testable: true, status: 200 })
		expect(last().path).toBe(`/model/${encodeURIComponent(TESTED_ARN)}/invoke`)
		expect(last().body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 1 })
		expect(lookupsOf(TESTED_ARN)).toBe(1)
	})
})
