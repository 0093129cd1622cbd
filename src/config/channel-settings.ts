/**
 * A channel's `base_url` and optional `settings`: one schema for the config file (gateway-file.ts) and the management
 * API (modules/admin/channels), so both refuse the same values with a message naming the field. Every key is one
 * some code reads; a misspelt key ("timeoutz") or a wrong type would otherwise be stored and then ignored without a
 * word, since the readers fall back to their defaults.
 * @module
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { EXTRA_TASK_PATH } from '../passthrough/task-routes'
import { matchesModel } from '../routing/catalog'

/** What setTimeout can wait: a longer delay fires at once (https://developer.mozilla.org/docs/Web/API/setTimeout#maximum_delay_value). */
const MAX_TIMER_MS = 2_147_483_647

const Ms = (description: string) => T.Integer({ minimum: 1, maximum: MAX_TIMER_MS, description })

/** Read by relay/upstream-fetch.ts `channelTimeouts`. */
export const ChannelTimeouts = T.Object(
	{
		first_byte_ms: T.Optional(Ms('Milliseconds to wait for the upstream response headers before failing over (default 120000)')),
		answer_ms: T.Optional(
			Ms('Milliseconds a non-streamed call, whose headers come with its whole answer, may wait for it before failing over (default first_byte_ms when set, else 600000)'),
		),
		idle_ms: T.Optional(Ms('Milliseconds a response body may stay silent before the call is cut (default 300000)')),
	},
	{ additionalProperties: false, description: 'Upstream timeouts of this channel' },
)

/** An HTTP header name (RFC 9110 token): fetch refuses anything else, which would fail every call of the channel. */
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"

export const ChannelSettings = T.Object(
	{
		timeouts: T.Optional(ChannelTimeouts),
		// Read by providers/adapter.ts `channelHeaders` (and passthrough/upstream.ts), added before the credentials.
		headers: T.Optional(
			T.Record(T.String({ pattern: HEADER_NAME }), T.String(), {
				additionalProperties: false,
				description: "Extra headers sent upstream with every call (e.g. OpenRouter's http-referer); they never replace the credentials",
			}),
		),
		// Read by providers/anthropic.ts `upstreamOptions`.
		structured_outputs: T.Optional(
			T.Union([T.Literal('native'), T.Literal('prompt')], {
				description:
					"Anthropic channels: how a JSON response format of a converted request is sent. 'native': Claude's output_config.format (constrained decoding); 'prompt': an instruction in the system prompt, for models or Anthropic-compatible vendors without structured outputs. Default: native for Claude 4.5 and later models, by name",
			}),
		),
		// Read by relay/auto-cache.ts `withAutoCache`.
		auto_cache: T.Optional(
			T.Union([T.Literal('prompt_cache_key'), T.Literal('always'), T.Literal('never')], {
				description:
					"Anthropic, Bedrock and Vertex AI channels serving Claude, and Bedrock channels serving Amazon Nova over Converse: when a request of an OpenAI chat-completions or Responses client (the gateway's MCP tool rounds too) asks the model to cache its prompt (the breakpoint at its last block: Anthropic's automatic caching; on Bedrock and Vertex AI the last message's last block; over Converse a cachePoint there and one where the previous turn ended), unless it has cache breakpoints of its own. 'prompt_cache_key': when it carries prompt_cache_key (prompt_cache_retention: 24h caches Claude for one hour; Nova's cache points take no TTL); 'always': every such request; 'never': none. Default: prompt_cache_key",
			}),
		),
		// Read by providers/openai.ts `upstreamOptions`.
		tool_call_ids: T.Optional(
			T.Literal('alnum9', {
				description:
					"OpenAI-compatible channels: tool call ids sent upstream are nine letters or digits, as Mistral models require (automatic for api.mistral.ai); another vendor's ids are mapped",
			}),
		),
		// Read by providers/openai.ts `upstreamOptions` and `chatUrl`.
		prefix_completion: T.Optional(
			T.Union([T.Literal('deepseek'), T.Literal('mistral')], {
				description:
					"OpenAI-compatible channels: an Anthropic or Gemini client's prefill (a final assistant turn to continue) goes as the last message marked prefix: true, the vendor's chat prefix completion; 'deepseek': the answer is the continuation (set base_url to the vendor's beta URL where it requires one), 'mistral': the answer repeats the prefix first, which is cut. Automatic for api.deepseek.com (called on /beta) and api.mistral.ai; elsewhere such a prefill is refused 400",
			}),
		),
		// Read by providers/openai.ts `upstreamOptions`.
		reasoning_effort: T.Optional(
			T.Boolean({
				description:
					"OpenAI-compatible channels: whether the thinking a converted request asks for (Claude's thinking, Gemini's thinkingConfig) goes upstream as reasoning_effort. false: never, for models that refuse it (non-reasoning models of other vendors); true: always. Default: not to OpenAI's models known not to reason (gpt-4o, gpt-4.1, gpt-3.5, chatgpt-4o-latest, gpt-5-chat-latest), by name; to any other model",
			}),
		),
		// Read by modules/responses/native.ts and providers/openai.ts `searchesThroughResponses`.
		responses_api: T.Optional(
			T.Boolean({
				description:
					"false: the vendor has no /responses endpoint, so Responses clients are converted to chat completions on this channel; true: it has one, so a converted request's web search goes there for a model that cannot search over chat (as to OpenAI's own API, by its URL)",
			}),
		),
		// Read by providers/vertex.ts `modelUrl`.
		project: T.Optional(
			T.String({
				pattern: '^[a-z][a-z0-9.:-]*[a-z0-9]$',
				description: "Vertex AI channels: the Google Cloud project id calls go to. Default: the service-account key's project_id, or an authorized_user, external_account or impersonated_service_account key's quota_project_id",
			}),
		),
		// Read by providers/bedrock.ts `bedrockRegion` and providers/vertex.ts `vertexRegion`.
		region: T.Optional(
			T.String({
				// AWS's us-east-1, Google's us-east5, europe-west4, global, and the us/eu multi-regions.
				pattern: '^(?:global|us|eu|[a-z]{2,}(?:-[a-z]+)+-?\\d+)$',
				description:
					"Bedrock channels: the AWS region IAM keys are signed for (SigV4), e.g. us-east-1. Default: the one a bedrock-runtime.{region}.amazonaws.com base_url names; required with IAM keys on any other base_url. Vertex AI channels: the location calls go to, e.g. global, us-east5, europe-west1. Default: the one a {region}-aiplatform.googleapis.com base_url names, else global",
			}),
		),
		// Read by providers/base-models.ts `foundationModelOf`.
		base_models: T.Optional(
			T.Record(T.String({ minLength: 1 }), T.String({ minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9.:_-]*$' }), {
				description:
					"Bedrock channels: the foundation model each application inference profile serves, by its ARN (an upstream id after model_map), e.g. {\"arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3\": \"anthropic.claude-sonnet-4-6-v1:0\"}. Such an ARN names no model: mapped to Claude, the profile goes over InvokeModel with Anthropic's body (Anthropic clients' fast path), its tokens counted by Bedrock and its output limit the model's; mapped to another model, over Converse with that family's own fields (thinking, prompt-caching cachePoint blocks, top-k). Without an entry, Bedrock's control plane is asked once which model it serves (GetInferenceProfile: see control_plane_url); until it answers, or when it refuses, the profile goes over Converse with none of them, and its tokens are counted locally",
			}),
		),
		// Read by providers/bedrock-profiles.ts `controlPlaneUrl`.
		control_plane_url: T.Optional(
			T.String({
				minLength: 1,
				pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
				description:
					"Bedrock channels: the base URL of Amazon Bedrock's control plane, where the foundation model of an application inference profile base_models does not list is asked (GetInferenceProfile, with the channel's credentials), e.g. a VPC endpoint's. Default: https://bedrock.{region}.amazonaws.com beside a bedrock-runtime.{region}.amazonaws.com base_url (FIPS and China's alike); on any other base_url nothing is asked",
			}),
		),
		// Read by providers/bedrock-guardrail.ts `guardrailOf`; with guardrail_version (guardrailProblem).
		guardrail_identifier: T.Optional(
			T.String({
				maxLength: 2048,
				// GuardrailConfiguration.guardrailIdentifier: an id or a guardrail's ARN (API_runtime_GuardrailConfiguration.html).
				pattern: '^(?:[a-z0-9]+|arn:aws(?:-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:guardrail/[a-z0-9]+)$',
				description:
					'Bedrock channels: the Amazon Bedrock guardrail applied to every call, by its id (e.g. gr0abc123xyz) or ARN; requires guardrail_version. Claude goes with the X-Amzn-Bedrock-Guardrail* headers of InvokeModel, other models with Converse\'s guardrailConfig',
			}),
		),
		guardrail_version: T.Optional(
			T.String({
				pattern: '^(?:[1-9][0-9]{0,7}|DRAFT)$',
				description: 'Bedrock channels: the version of guardrail_identifier applied, a number such as "1" or "DRAFT"',
			}),
		),
		guardrail_trace: T.Optional(
			T.Union([T.Literal('enabled'), T.Literal('disabled'), T.Literal('enabled_full')], {
				description:
					"Bedrock channels with a guardrail: the guardrail trace Bedrock is asked for (X-Amzn-Bedrock-Trace, Converse's trace), for Bedrock's own invocation logs; the gateway never forwards a trace to clients. Default: Bedrock's (disabled)",
			}),
		),
		guardrail_stream_mode: T.Optional(
			T.Union([T.Literal('sync'), T.Literal('async')], {
				description:
					"Bedrock channels with a guardrail: how streams are scanned (ConverseStream's streamProcessingMode; for Claude, InvokeModelWithResponseStream's body member amazon-bedrock-guardrailConfig.streamProcessingMode ASYNCHRONOUS). 'sync': chunks are held until scanned; 'async': sent at once and scanned in the background, so text the guardrail would block or mask may reach the client first, the stream then ending as a content filter. Default: Bedrock's (sync)",
			}),
		),
		// Read by modules/audio/speech.ts `asksEvents`.
		speech_sse: T.Optional(
			T.Boolean({
				description:
					'false: plain-audio speech of a model priced by tokens is asked upstream as plain audio, not as speech.audio.delta events (stream_format: sse) decoded back, for an OpenAI-compatible vendor that refuses stream_format; such speech is then charged its input alone, the audio reporting no usage',
			}),
		),
		// Read by providers/azure.ts.
		api_version: T.Optional(
			T.String({
				minLength: 1,
				pattern: '^[A-Za-z0-9.-]+$',
				description: "Azure channels: the api-version query parameter of deployment URLs (default 2025-04-01-preview); not sent to a base_url ending /openai/v1 (Azure's v1 API)",
			}),
		),
		// Read by providers/azure-entra.ts.
		authority_host: T.Optional(
			T.String({
				minLength: 1,
				pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
				description:
					"Azure channels with a service principal key: the Microsoft Entra ID authority its token comes from, {authority_host}/{tenant_id}/oauth2/v2.0/token (default https://login.microsoftonline.com; Azure Government's is https://login.microsoftonline.us)",
			}),
		),
		// Read by providers/azure-entra.ts.
		token_scope: T.Optional(
			T.String({
				minLength: 1,
				pattern: '^\\S+$',
				description:
					"Azure channels with a service principal key or keyed ambient: the scope its token is asked for (default https://cognitiveservices.azure.com/.default; Azure Government's is https://cognitiveservices.azure.us/.default); a managed identity's is asked for the resource, the scope without /.default",
			}),
		),
		// Read by providers/azure-managed-identity.ts.
		client_id: T.Optional(
			T.String({
				pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
				description: 'Azure channels keyed ambient: the client id (a GUID) of the user-assigned managed identity whose token is asked for (default: the system-assigned identity)',
			}),
		),
		// Read by passthrough/task-routes.ts `extraPathChannels` (the /mj/* and /suno/* catch-alls).
		extra_task_paths: T.Optional(
			T.Array(T.String({ pattern: EXTRA_TASK_PATH }), {
				maxItems: 100,
				uniqueItems: true,
				description:
					"imgsvc (Midjourney) and musicsvc (Suno) channels: routes beyond the allow list that clients may call on this channel, passed through unbilled with the channel's secret, each a method and an exact path, e.g. \"GET /mj/notify/status\". Lowercase segments under /mj/ (imgsvc) or /suno/ (musicsvc); not under the billed or task paths /mj/submit, /mj/insight-face, /mj/task, /suno/submit, /suno/fetch",
			}),
		),
		// Read by modules/interactions/native.ts.
		interactions_api: T.Optional(
			T.Boolean({
				description: "Gemini channels: true serves Gemini Interactions API clients (/v1beta/interactions) from the vendor's own /v1beta/interactions rather than generateContent (Google's built-in tools then work)",
			}),
		),
	},
	{ additionalProperties: false, description: 'Optional channel settings; any other key is refused' },
)
export type ChannelSettings = Static<typeof ChannelSettings>

/**
 * An http(s) URL with a host and no whitespace. A value that is not one (e.g. "not a url") would make every call of
 * the channel fail with `upstream_unreachable`.
 */
export const BaseUrl = T.String({
	minLength: 1,
	pattern: '^https?://[^\\s/?#]+([/?#]\\S*)?$',
	description: 'An http:// or https:// URL',
})

/** PostgreSQL's `integer`, the column type of a channel's priority and weight and of a model's output cap. */
export const INT32_MAX = 2_147_483_647

/**
 * Bounded to the column: a larger value passed the schema and then failed the write itself, which stopped a start
 * with the raw SQL statement rather than a message naming the file, entry and field.
 */
export const Priority = T.Integer({ minimum: -INT32_MAX, maximum: INT32_MAX, description: 'Lower is tried first' })
export const Weight = T.Integer({ minimum: 0, maximum: INT32_MAX, description: 'Share among channels of equal priority; 0 is a standby, tried only after every other channel of its priority (before the next priority)' })

/**
 * The first `model_map` key the channel's `models` do not list (exactly or by a glob), if any. Routing looks the
 * client's model up in `models` before it renames it, so such an entry is never used: clients asking for that name
 * get 404, however the map reads. Refused, naming the key, in the config file and the management API.
 * @example unlistedMapKey(['gpt-4o'], { fast: 'gpt-4.1-mini' }) === 'fast'
 */
export function unlistedMapKey(models: string[], modelMap: Record<string, string> | undefined): string | undefined {
	return Object.keys(modelMap ?? {}).find((k) => !matchesModel(models, k))
}

export const unlistedMapKeyMessage = (key: string) => `"${key}" is not among the channel's models, so a request for it never reaches this channel (404): add "${key}" to models`

/** The guardrail settings that need a guardrail to apply to. */
const GUARDRAIL_OPTIONS = ['guardrail_trace', 'guardrail_stream_mode'] as const

/**
 * Why a channel's guardrail settings cannot work (`field`: the one to fix, `given`: the one set), or undefined.
 * Bedrock takes a guardrail only with both its identifier and its version ("You provide a guardrail identifier, but
 * guardrailVersion isn't specified" is a 400 on every call), and a trace or stream mode alone would be ignored without
 * a word. Refused, naming the field, in the config file and the management API.
 * @example guardrailProblem({ guardrail_identifier: 'gr1' }) // { field: 'guardrail_version', given: 'guardrail_identifier', message: '…' }
 */
export function guardrailProblem(settings: ChannelSettings | undefined): { field: string; given: string; message: string } | undefined {
	const id = settings?.guardrail_identifier
	const version = settings?.guardrail_version
	if (id !== undefined && version === undefined) {
		const message = 'guardrail_identifier needs guardrail_version (a number such as "1", or "DRAFT"): Bedrock refuses a guardrail without its version'
		return { field: 'guardrail_version', given: 'guardrail_identifier', message }
	}
	if (version !== undefined && id === undefined)
		return { field: 'guardrail_identifier', given: 'guardrail_version', message: "guardrail_version needs guardrail_identifier (the guardrail's id or ARN)" }
	const option = id === undefined ? GUARDRAIL_OPTIONS.find((k) => settings?.[k] !== undefined) : undefined
	if (option) return { field: option, given: option, message: `${option} applies to a guardrail: set guardrail_identifier and guardrail_version too` }
	return undefined
}
