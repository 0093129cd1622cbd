/**
 * Amazon Bedrock: Claude over InvokeModel, every other model over the Converse API, chosen per upstream model id
 * (`forModel`): an id naming `anthropic.claude` (a model, an inference profile such as
 * `us.anthropic.claude-sonnet-4-6-v1:0`, or an ARN that names it), or an application inference profile's ARN the
 * channel's `settings.base_models` maps to such an id (or, unlisted, Bedrock's control plane said serves one:
 * bedrock-profiles.ts), keeps InvokeModel, Anthropic's own body, so Anthropic clients
 * keep the same-protocol fast path (InvokeModel takes a profile's ARN as modelId:
 * https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-use.html); any other
 * (`us.amazon.nova-pro-v1:0`, `meta.llama3-3-70b-instruct-v1:0`, `deepseek.r1-v1:0`, `openai.gpt-oss-120b-1:0`, an
 * application inference profile's ARN whose model is not known, or not yet…) goes over Converse
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html), converted from and to every
 * client protocol (protocols/bedrock-converse).
 * - Claude: Anthropic's Messages protocol in Bedrock's envelope
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html),
 *   URL `{base_url}/model/{modelId}/invoke`, `/invoke-with-response-stream` when streamed.
 * - Converse: `{base_url}/model/{modelId}/converse`, `/converse-stream` when streamed.
 * - The model id is one encoded path segment.
 * - Body: Anthropic's without `model` and `stream`, with `anthropic_version: "bedrock-2023-05-31"` and the
 *   `anthropic-beta` header's values as an `anthropic_beta` array, those Bedrock refuses left out (platform-betas.ts),
 *   and without Claude Code's attribution line, which Bedrock refuses in a system prompt (attribution-line.ts).
 * - Auth: a Bedrock API key as `Authorization: Bearer` (https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html),
 *   or IAM keys given as `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`, signed with SigV4 (service `bedrock`), or
 *   `ambient`: the temporary keys of the role the gateway runs as (aws/ambient.ts), signed so, renewed after a refusal.
 * - A guardrail (`settings.guardrail_identifier`, `guardrail_version`…) applies to every call: bedrock-guardrail.ts;
 *   Claude's answers are read for an intervention on every channel (an account's enforced guardrail needs no setting).
 * - Streams come as AWS event-stream frames, re-framed as SSE: Claude's as Anthropic's (bedrock-stream.ts),
 *   ConverseStream's as one frame per event (bedrock-converse-stream.ts); whole answers and errors (`{"message": …}`,
 *   `x-amzn-errortype`, the same for both APIs) are read as they come.
 * @module
 */
import { GatewayError } from '../core/errors'
import { anthropicMessages } from '../protocols/anthropic-messages'
import { bedrockConverse } from '../protocols/bedrock-converse'
import type { Channel } from '../routing/catalog'
import { type CallHooks, type ChatAdapter, channelHeaders, joinUrl, type UpstreamRequest } from './adapter'
import { anthropicAdapter } from './anthropic'
import { dropAttributionLine } from './attribution-line'
import { baseModelOf, foundationModelOf } from './base-models'
import { stringSetting } from './channel-key-memo'
import { ambientAwsCredentials, dropAmbientAwsCredentials } from './aws/ambient'
import { type AwsCredentials, signV4 } from './aws/sigv4'
import { converseSse } from './bedrock-converse-stream'
import { guardedJson, guardrailHeaders, guardrailOf, withStreamMode } from './bedrock-guardrail'
import { anthropicSseOf } from './bedrock-stream'
import { isAmbient } from './metadata-service'
import { afterBedrockRefusal, bedrockRefusedBeta, cloudBetas, foldSystemMessages, splitBetas, withoutRefused } from './platform-betas'

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
	const region = stringSetting(ch, 'region')
	if (region) return region
	try {
		return REGION_IN_HOST.exec(new URL(ch.baseUrl).hostname)?.[1]
	} catch {
		return undefined
	}
}

/**
 * Whether a Bedrock model id is Claude's, served over InvokeModel: by its own name, or for an application inference
 * profile's ARN, which names no model, by the foundation model the channel's `settings.base_models` maps it to, else
 * the one Bedrock said it serves (bedrock-profiles.ts).
 * @example isBedrockClaude(ch, 'us.anthropic.claude-sonnet-4-6-v1:0') === true
 * @example isBedrockClaude({ settings: { base_models: { 'arn:…/a1b2': 'anthropic.claude-sonnet-4-6-v1:0' } } } as Channel, 'arn:…/a1b2') === true
 */
export const isBedrockClaude = (ch: Channel, model: string) => foundationModelOf(ch, model).includes('anthropic.claude')

const EVENT_STREAM = 'application/vnd.amazon.eventstream'

/**
 * A Bedrock answer as its protocol's wire: an error with its honest status; an event stream re-framed by `sse`; a
 * whole answer as it came, or through `whole` (Claude's with a guardrail: bedrock-guardrail.ts).
 */
function answerWith(res: Response, sse: (body: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>, whole?: (res: Response) => Response): Response {
	if (!res.ok) {
		const status = honestStatus(res)
		return status === res.status ? res : new Response(res.body, { status, headers: res.headers })
	}
	if (!res.body || !res.headers.get('content-type')?.includes(EVENT_STREAM)) return whole ? whole(res) : res
	const headers = new Headers(res.headers)
	headers.set('content-type', 'text/event-stream')
	headers.delete('content-length')
	return new Response(sse(res.body), { status: res.status, headers })
}

export const bedrockClaudeAdapter: ChatAdapter = {
	protocol: anthropicMessages,
	chatUrl: (ch, model, stream) => joinUrl(ch.baseUrl, `/model/${encodeURIComponent(model)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`),
	headers(ch, inbound) {
		// The guardrail's headers after the channel's own: signed with the others by `authorize`.
		const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...channelHeaders(ch), ...guardrailHeaders(ch) }
		// Carried to `reshape`, which moves it into the body: Bedrock reads betas there, not from a header.
		const beta = inbound?.get('anthropic-beta')
		if (beta) h['anthropic-beta'] = beta
		return h
	},
	// Asked of the model a profile's ARN stands for: its name says which features it has (structured outputs, adaptive thinking).
	// Automatic (request-level) caching is not documented for InvokeModel: a whole-prompt cache marks the last block.
	upstreamOptions: (ch, model) => ({ ...anthropicAdapter.upstreamOptions!(ch, foundationModelOf(ch, model)), requestCacheControl: false }),
	withoutMcpConnector: true,
	reshape(ch, req) {
		if (req.body === undefined) return
		const body = JSON.parse(req.body) as Record<string, unknown>
		delete body.model
		delete body.stream
		body.anthropic_version = BEDROCK_VERSION
		// The guardrail's async stream mode is InvokeModelWithResponseStream's alone, in the body `authorize` then signs.
		if (req.url.endsWith('/invoke-with-response-stream')) withStreamMode(ch, body)
		const beta = req.headers['anthropic-beta']
		delete req.headers['anthropic-beta']
		const asked = [...(Array.isArray(body.anthropic_beta) ? (body.anthropic_beta as string[]) : []), ...(beta ? splitBetas(beta) : [])]
		// In Bedrock's names, without those this endpoint refused before (platform-betas.ts).
		const betas = asked.length ? withoutRefused(ch, req.url, cloudBetas(asked)) : asked
		if (betas.length) body.anthropic_beta = betas
		else delete body.anthropic_beta
		foldSystemMessages(body, betas)
		dropAttributionLine(body)
		req.body = JSON.stringify(body)
	},
	async refused(ch, req, res) {
		if (req.body === undefined || !bedrockRefusedBeta(await res.text())) return false
		const body = JSON.parse(req.body) as Record<string, unknown>
		const next = afterBedrockRefusal(ch, req.url, Array.isArray(body.anthropic_beta) ? (body.anthropic_beta as string[]) : [])
		if (!next) return false
		if (next.length) body.anthropic_beta = next
		else delete body.anthropic_beta
		foldSystemMessages(body, next)
		req.body = JSON.stringify(body)
		return true
	},
	authorize: authorizeBedrock,
	reauthorize: reauthorizeBedrock,
	// A guardrail's intervention read out of Claude's answer and its trace dropped (bedrock-guardrail.ts), on every
	// channel: one the account enforces intervenes without the channel naming it.
	answer: (res) => answerWith(res, (body) => anthropicSseOf(body, true), guardedJson),
}

/** Every model but Claude: Converse, same auth, region and errors. */
export const bedrockConverseAdapter: ChatAdapter = {
	protocol: bedrockConverse,
	chatUrl: (ch, model, stream) => joinUrl(ch.baseUrl, `/model/${encodeURIComponent(model)}/${stream ? 'converse-stream' : 'converse'}`),
	headers: (ch) => ({ 'content-type': 'application/json', accept: 'application/json', ...channelHeaders(ch) }),
	upstreamOptions: (ch, model) => {
		const foundation = baseModelOf(ch, model)
		const guardrail = guardrailOf(ch)
		return { ...(foundation && { foundationModel: foundation }), ...(guardrail && { guardrail }) }
	},
	authorize: authorizeBedrock,
	reauthorize: reauthorizeBedrock,
	answer: (res) => answerWith(res, converseSse),
}

/**
 * The model id Bedrock's CountTokens takes for an upstream id, or undefined when it counts none of its tokens. It
 * counts Claude's only ("The provided model doesn't support counting tokens" for Amazon Nova and the others), and by
 * the foundation model's own id, refusing inference profiles
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html: "modelId: The unique identifier
 * or ARN of the foundation model"): an ARN's model part, without a cross-region profile's geography
 * (`us.`, `eu.`, `apac.`, `global.`…), an application inference profile's by `settings.base_models`.
 * @example countTokensModel(ch, 'us.anthropic.claude-sonnet-4-6-v1:0') === 'anthropic.claude-sonnet-4-6-v1:0'
 */
export function countTokensModel(ch: Channel, model: string): string | undefined {
	const id = foundationModelOf(ch, model).replace(/^.*\//, '')
	const at = id.indexOf('anthropic.claude')
	return at < 0 ? undefined : id.slice(at)
}

/** `POST {base_url}/model/{modelId}/count-tokens`. */
export const countTokensUrl = (ch: Channel, model: string) => joinUrl(ch.baseUrl, `/model/${encodeURIComponent(model)}/count-tokens`)

/** The credential and error hooks of a CountTokens call, as for chat. */
export const bedrockCountHooks: CallHooks = {
	authorize: authorizeBedrock,
	reauthorize: reauthorizeBedrock,
	answer: (res) => answerWith(res, (body) => body),
}

/** The channel type's adapter: Claude's until the model is known (`forModel`), as for the catalog's protocol questions. */
export const bedrockAdapter: ChatAdapter = {
	...bedrockClaudeAdapter,
	forModel: (model, ch) => (isBedrockClaude(ch, model) ? bedrockClaudeAdapter : bedrockConverseAdapter),
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

/** Bearer for an API key; SigV4 over the final url, method and body for IAM keys and the role's (`ambient`). */
async function authorizeBedrock(ch: Channel, req: UpstreamRequest, signal?: AbortSignal) {
	const ambient = isAmbient(ch.apiKey)
	const iam = ambient ? undefined : iamKeys(ch.apiKey)
	if (!iam && !ambient) {
		req.headers.authorization = `Bearer ${ch.apiKey}`
		return
	}
	const region = bedrockRegion(ch)
	if (!region)
		throw new GatewayError('unavailable', `channel ${ch.name} (bedrock): no region to sign for: set settings.region or a bedrock-runtime.{region}.amazonaws.com base_url`, {
			retryable: true,
			code: 'channel_misconfigured',
		})
	const credentials = iam ?? (await ambientAwsCredentials(ch.id, ch.apiKey, signal))
	// Signed again after a refusal: the first signature's own headers are not among those signed.
	delete req.headers.authorization
	delete req.headers['x-amz-date']
	delete req.headers['x-amz-security-token']
	Object.assign(req.headers, signV4({ method: req.method, url: req.url, headers: req.headers, body: req.body, region, service: SIGNING_SERVICE, credentials }))
}

/** After a 401 (Bedrock's ExpiredTokenException and kin): the role's credentials the signature names are dropped, and the call made once more. */
function reauthorizeBedrock(ch: Channel, req: UpstreamRequest): boolean {
	if (!isAmbient(ch.apiKey)) return false
	const akid = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1]
	return akid !== undefined && dropAmbientAwsCredentials(ch.id, akid)
}
