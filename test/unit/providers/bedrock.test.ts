/**
 * The Bedrock adapter's pieces: the key forms, the region, the URL of a model id, the envelope, a region missing, the
 * API each model goes over, and ConverseStream's event-stream re-framed as SSE.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { type UpstreamRequest } from '../../../src/providers/adapter'
import { bedrockConverse } from '../../../src/protocols/bedrock-converse'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { bedrockAdapter, bedrockRegion, countTokensModel, iamKeys } from '../../../src/providers/bedrock'
import { chatAdapterOf } from '../../../src/providers/registry'
import { exceptionMessage, frameMessage } from '../../mocks/bedrock/event-stream'
import type { Channel } from '../../../src/routing/catalog'

const channel = (over: Partial<Channel> = {}): Channel => ({
	id: 1,
	name: 'br',
	type: 'bedrock',
	baseUrl: 'https://bedrock-runtime.eu-central-1.amazonaws.com',
	apiKey: 'ABSKexample',
	models: ['*'],
	modelMap: {},
	priority: 0,
	weight: 1,
	settings: {},
	...over,
})

describe('bedrock adapter', () => {
	it("should give CountTokens the foundation model's own id: no geography prefix, an ARN's model part, a profile's base model; none but Claude's", () => {
		const arn = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2'
		const ch = channel({ settings: { base_models: { [arn]: 'anthropic.claude-sonnet-4-5-20250929-v1:0' } } })
		expect(countTokensModel(ch, 'us.anthropic.claude-sonnet-4-6-v1:0')).toBe('anthropic.claude-sonnet-4-6-v1:0')
		expect(countTokensModel(ch, 'global.anthropic.claude-haiku-4-5-20251001-v1:0')).toBe('anthropic.claude-haiku-4-5-20251001-v1:0')
		expect(countTokensModel(ch, 'arn:aws:bedrock:eu-west-1:111122223333:inference-profile/eu.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe('anthropic.claude-3-7-sonnet-20250219-v1:0')
		expect(countTokensModel(ch, arn)).toBe('anthropic.claude-sonnet-4-5-20250929-v1:0')
		expect(countTokensModel(channel(), arn)).toBeUndefined()
		expect(countTokensModel(ch, 'us.amazon.nova-pro-v1:0')).toBeUndefined()
	})

	it('should give the Converse codec the foundation model of an application inference profile', () => {
		const arn = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2'
		const ch = channel({ settings: { base_models: { [arn]: 'amazon.nova-pro-v1:0' } } })
		expect(bedrockAdapter.forModel!(arn, ch).upstreamOptions!(ch, arn)).toEqual({ foundationModel: 'amazon.nova-pro-v1:0' })
		expect(bedrockAdapter.forModel!(arn, channel()).upstreamOptions!(channel(), arn)).toEqual({})
	})

	it('should send an application inference profile mapped to Claude in settings.base_models over InvokeModel, asking its features of the Claude model', () => {
		const arn = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2'
		const ch = channel({ modelMap: { mine: arn }, settings: { base_models: { [arn]: 'us.anthropic.claude-opus-4-7-v1:0' } } })
		const claude = bedrockAdapter.forModel!(arn, ch)
		expect(claude.protocol).toBe(anthropicMessages)
		expect(chatAdapterOf(ch, 'mine')?.protocol).toBe(anthropicMessages)
		expect(claude.chatUrl(ch, arn, false)).toBe(`https://bedrock-runtime.eu-central-1.amazonaws.com/model/${encodeURIComponent(arn)}/invoke`)
		// Claude Opus 4.7 takes structured outputs and adaptive thinking only, and refuses sampling settings: its ARN says none of it.
		// Bedrock documents no request-level cache_control: an asked cache goes as a block's breakpoint.
		expect(claude.upstreamOptions!(ch, arn)).toEqual({ nativeStructuredOutputs: true, adaptiveThinking: 'only', fixedSampling: true, requestCacheControl: false })
		// The same ARN on a channel that does not say what it serves, or says another model: Converse.
		expect(bedrockAdapter.forModel!(arn, channel()).protocol).toBe(bedrockConverse)
		expect(bedrockAdapter.forModel!(arn, channel({ settings: { base_models: { [arn]: 'amazon.nova-pro-v1:0' } } })).protocol).toBe(bedrockConverse)
	})

	it('should tell IAM keys from a Bedrock API key', () => {
		expect(iamKeys('AKIAEXAMPLE:secret/with+chars')).toEqual({ accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret/with+chars', sessionToken: undefined })
		expect(iamKeys('ASIAEXAMPLE:secret:token')).toEqual({ accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' })
		expect(iamKeys('ABSKQmVkcm9ja0FQSUtleS0=')).toBeUndefined()
		expect(iamKeys('bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t')).toBeUndefined()
		expect(iamKeys('a::c')).toBeUndefined()
	})

	it("should take the region from settings, else from the runtime endpoint's host", () => {
		expect(bedrockRegion(channel())).toBe('eu-central-1')
		expect(bedrockRegion(channel({ baseUrl: 'https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com' }))).toBe('us-gov-west-1')
		expect(bedrockRegion(channel({ baseUrl: 'https://proxy.internal', settings: { region: 'ap-northeast-1' } }))).toBe('ap-northeast-1')
		expect(bedrockRegion(channel({ baseUrl: 'https://proxy.internal' }))).toBeUndefined()
	})

	it('should put a model id, profile or ARN in one encoded path segment', () => {
		const ch = channel()
		expect(bedrockAdapter.chatUrl(ch, 'us.anthropic.claude-sonnet-4-6-v1:0', false)).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-6-v1%3A0/invoke')
		expect(bedrockAdapter.chatUrl(ch, 'arn:aws:bedrock:eu-central-1:123456789012:application-inference-profile/abc', true)).toBe(
			'https://bedrock-runtime.eu-central-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aeu-central-1%3A123456789012%3Aapplication-inference-profile%2Fabc/invoke-with-response-stream',
		)
	})

	it("should reshape the body into Bedrock's envelope, the betas of the header and the body together", () => {
		const req: UpstreamRequest = {
			url: 'https://x/model/m/invoke',
			method: 'POST',
			headers: { 'content-type': 'application/json', 'anthropic-beta': 'b1, b2' },
			body: JSON.stringify({ model: 'm', stream: true, max_tokens: 5, messages: [], anthropic_beta: ['b0', 'b1'] }),
		}
		bedrockAdapter.reshape!(channel(), req)
		expect(JSON.parse(req.body!)).toEqual({ max_tokens: 5, messages: [], anthropic_beta: ['b0', 'b1', 'b2'], anthropic_version: 'bedrock-2023-05-31' })
		expect(req.headers['anthropic-beta']).toBeUndefined()
	})

	it('should sign with IAM keys, and send an API key as a bearer token', async () => {
		const signed: UpstreamRequest = { url: 'https://bedrock-runtime.eu-central-1.amazonaws.com/model/m/invoke', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }
		await bedrockAdapter.authorize!(channel({ apiKey: 'AKIAEXAMPLE:secret' }), signed)
		expect(signed.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE\/\d{8}\/eu-central-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/)
		const bearer: UpstreamRequest = { url: 'https://x/model/m/invoke', method: 'POST', headers: {}, body: '{}' }
		await bedrockAdapter.authorize!(channel(), bearer)
		expect(bearer.headers.authorization).toBe('Bearer ABSKexample')
	})

	it('should refuse to sign without a region, saying how to give one', async () => {
		const req: UpstreamRequest = { url: 'https://proxy.internal/model/m/invoke', method: 'POST', headers: {}, body: '{}' }
		const e = await bedrockAdapter.authorize!(channel({ baseUrl: 'https://proxy.internal', apiKey: 'AKIAEXAMPLE:secret' }), req).catch((x) => x)
		expect(e).toBeInstanceOf(GatewayError)
		expect(e.message).toContain('settings.region')
	})

	it('should send Claude ids over InvokeModel and every other model over Converse', () => {
		const ch = channel({ modelMap: { nova: 'us.amazon.nova-pro-v1:0' } })
		for (const id of ['us.anthropic.claude-sonnet-4-6-v1:0', 'anthropic.claude-haiku-4-5-20251001-v1:0', 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-1-20250805-v1:0'])
			expect(bedrockAdapter.forModel!(id, ch).protocol).toBe(anthropicMessages)
		const converse = bedrockAdapter.forModel!('meta.llama3-3-70b-instruct-v1:0', ch)
		expect(converse.protocol).toBe(bedrockConverse)
		expect(converse.chatUrl(ch, 'us.amazon.nova-pro-v1:0', false)).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com/model/us.amazon.nova-pro-v1%3A0/converse')
		expect(converse.chatUrl(ch, 'us.amazon.nova-pro-v1:0', true)).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com/model/us.amazon.nova-pro-v1%3A0/converse-stream')
		// The public name goes through model_map first.
		expect(chatAdapterOf(ch, 'nova')?.protocol).toBe(bedrockConverse)
		expect(converse.reshape).toBeUndefined()
	})

	it("should re-frame ConverseStream's events and exceptions as SSE, however the bytes are cut", async () => {
		const event = (type: string, payload: unknown) => frameMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(payload))
		const bytes = Buffer.concat([
			event('messageStart', { role: 'assistant', p: 'ab' }),
			event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hi\nthere' } }),
			exceptionMessage('throttlingException', 'Too many tokens'),
		])
		for (const cut of [1, 7, bytes.length - 3]) {
			const body = new ReadableStream<Uint8Array>({
				start(ctl) {
					ctl.enqueue(new Uint8Array(bytes.subarray(0, cut)))
					ctl.enqueue(new Uint8Array(bytes.subarray(cut)))
					ctl.close()
				},
			})
			const res = bedrockAdapter.forModel!('us.amazon.nova-pro-v1:0', channel()).answer!(new Response(body, { headers: { 'content-type': 'application/vnd.amazon.eventstream' } }))
			expect(res.headers.get('content-type')).toBe('text/event-stream')
			expect(await res.text()).toBe(
				'event: messageStart\ndata: {"role":"assistant","p":"ab"}\n\n' +
					'event: contentBlockDelta\ndata: {"contentBlockIndex":0,"delta":{"text":"hi\\nthere"}}\n\n' +
					'event: exception\ndata: {"exceptionType":"throttlingException","message":"Too many tokens"}\n\n',
			)
		}
	})

	it("should give Converse's errors the same honest statuses as InvokeModel's", () => {
		const answer = bedrockAdapter.forModel!('us.amazon.nova-pro-v1:0', channel()).answer!
		const refused = answer(new Response('{"message":"bad signature"}', { status: 403, headers: { 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' } }))
		expect(refused.status).toBe(401)
		expect(answer(new Response('{"message":"slow"}', { status: 424, headers: { 'x-amzn-errortype': 'ModelErrorException' } })).status).toBe(502)
	})
})
