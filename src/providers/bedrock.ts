/**
 * Claude on Amazon Bedrock (InvokeModel): Anthropic's Messages protocol in Bedrock's envelope
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html).
 * - URL `{base_url}/model/{modelId}/invoke`, `/invoke-with-response-stream` when streamed; the model id (a model,
 *   an inference profile such as `us.anthropic.claude-sonnet-4-6-v1:0`, or an ARN) is one encoded path segment.
 * - Body: Anthropic's without `model` and `stream`, with `anthropic_version: "bedrock-2023-05-31"` and the
 *   `anthropic-beta` header's values as an `anthropic_beta` array.
 * - Auth: a Bedrock API key as `Authorization: Bearer` (https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html),
 *   or IAM keys given as `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`, signed with SigV4 (service `bedrock`).
 * - Streams come as AWS event-stream frames, re-framed as Anthropic SSE (bedrock-stream.ts); whole answers and
 *   errors (`{"message": …}`, `x-amzn-errortype`) are read as they come.
 * @module
 */
import { GatewayError } from '../core/errors'
import { anthropicMessages } from '../protocols/anthropic-messages'
import type { Channel } from '../routing/catalog'
import { type ChatAdapter, channelHeaders, joinUrl, type UpstreamRequest } from './adapter'
import { anthropicAdapter } from './anthropic'
import { type AwsCredentials, signV4 } from './aws/sigv4'
import { anthropicSseOf } from './bedrock-stream'

export const BEDROCK_VERSION = 'bedrock-2023-05-31'
/** SigV4's service name for the Bedrock runtime endpoints. */
const SIGNING_SERVICE = 'bedrock'
/** `bedrock-runtime.us-east-1.amazonaws.com`, `bedrock-runtime-fips.us-gov-west-1.amazonaws.com`, `….amazonaws.com.cn` */
const REGION_IN_HOST = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/

/**
 * The channel's IAM keys (`ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`), or undefined for a Bedrock API key (a
 * bearer token: base64, no colon).
 * @example iamKeys('AKIA…:wJal…') // { accessKeyId: 'AKIA…', secretAccessKey: 'wJal…' }
 */
export function iamKeys(key: string): AwsCredentials | undefined {
	const parts = key.split(':')
	if (parts.length < 2 || parts.length > 3 || parts.some((p) => !p)) return undefined
	return { accessKeyId: parts[0]!, secretAccessKey: parts[1]!, sessionToken: parts[2] }
}

/** The channel's region: `settings.region`, else the one its base URL names. */
export function bedrockRegion(ch: Channel): string | undefined {
	if (typeof ch.settings.region === 'string' && ch.settings.region) return ch.settings.region
	try {
		return REGION_IN_HOST.exec(new URL(ch.baseUrl).hostname)?.[1]
	} catch {
		return undefined
	}
}

const betasOf = (header: string) =>
	header
		.split(',')
		.map((b) => b.trim())
		.filter(Boolean)

export const bedrockAdapter: ChatAdapter = {
	protocol: anthropicMessages,
	chatUrl: (ch, model, stream) => joinUrl(ch.baseUrl, `/model/${encodeURIComponent(model)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`),
	headers(ch, inbound) {
		const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...channelHeaders(ch) }
		// Carried to `reshape`, which moves it into the body: Bedrock reads betas there, not from a header.
		const beta = inbound?.get('anthropic-beta')
		if (beta) h['anthropic-beta'] = beta
		return h
	},
	upstreamOptions: anthropicAdapter.upstreamOptions,
	withoutMcpConnector: true,
	reshape(_ch, req) {
		if (req.body === undefined) return
		const body = JSON.parse(req.body) as Record<string, unknown>
		delete body.model
		delete body.stream
		body.anthropic_version = BEDROCK_VERSION
		const beta = req.headers['anthropic-beta']
		delete req.headers['anthropic-beta']
		if (beta) body.anthropic_beta = [...new Set([...(Array.isArray(body.anthropic_beta) ? (body.anthropic_beta as string[]) : []), ...betasOf(beta)])]
		req.body = JSON.stringify(body)
	},
	async authorize(ch, req) {
		authorizeBedrock(ch, req)
	},
	answer(res) {
		if (!res.ok) {
			const status = honestStatus(res)
			return status === res.status ? res : new Response(res.body, { status, headers: res.headers })
		}
		if (!res.body || !res.headers.get('content-type')?.includes('application/vnd.amazon.eventstream')) return res
		const headers = new Headers(res.headers)
		headers.set('content-type', 'text/event-stream')
		headers.delete('content-length')
		return new Response(anthropicSseOf(res.body), { status: res.status, headers })
	},
}

/**
 * Bedrock answers 403 both to keys it does not take and to a model the account may not use (AccessDeniedException),
 * and 400 to a malformed signature (IncompleteSignature). The key errors are the channel's credentials (a 401 anywhere
 * else, which routing treats so), told apart by the `x-amzn-errortype` AWS gives them
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/troubleshooting-api-error-codes.html).
 */
const CREDENTIAL_ERRORS = new Set([
	'UnrecognizedClientException',
	'InvalidSignatureException',
	'IncompleteSignature',
	'IncompleteSignatureException',
	'MissingAuthenticationTokenException',
	'ExpiredTokenException',
	'InvalidClientTokenId',
])

/**
 * The status a Bedrock error stands for elsewhere: the channel's keys refused → 401; the model's own failures, which
 * Bedrock words as 4xx (408 ModelTimeoutException, 424 ModelErrorException), → 504 and 502, which another channel may
 * answer. Any other keeps its own.
 */
function honestStatus(res: Response): number {
	const type = res.headers.get('x-amzn-errortype')?.split(':')[0] ?? ''
	if ((res.status === 403 || res.status === 400) && CREDENTIAL_ERRORS.has(type)) return 401
	if (type === 'ModelTimeoutException') return 504
	if (type === 'ModelErrorException') return 502
	return res.status
}

/** Bearer for an API key; SigV4 over the final url, method and body for IAM keys. */
function authorizeBedrock(ch: Channel, req: UpstreamRequest) {
	const iam = iamKeys(ch.apiKey)
	if (!iam) {
		req.headers.authorization = `Bearer ${ch.apiKey}`
		return
	}
	const region = bedrockRegion(ch)
	if (!region)
		throw new GatewayError('unavailable', `channel ${ch.name} (bedrock): no region to sign for: set settings.region or a bedrock-runtime.{region}.amazonaws.com base_url`, {
			retryable: true,
			code: 'channel_misconfigured',
		})
	Object.assign(req.headers, signV4({ method: req.method, url: req.url, headers: req.headers, body: req.body, region, service: SIGNING_SERVICE, credentials: iam }))
}
