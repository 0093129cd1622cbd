/** The Bedrock adapter's pieces: the key forms, the region, the URL of a model id, the envelope, and a region missing. */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { type UpstreamRequest } from '../../../src/providers/adapter'
import { bedrockAdapter, bedrockRegion, iamKeys } from '../../../src/providers/bedrock'
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
})
