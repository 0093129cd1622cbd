/**
 * Wire schemas of the Gemini generateContent API (https://ai.google.dev/api/generate-content).
 * Requests are validated permissively: unknown properties pass (Google adds fields often, and proto-JSON also
 * accepts snake_case spellings, which the decoder reads), while the types, required fields and enum values the
 * API checks are checked here too. Response and chunk schemas describe the OpenAPI document.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../json-types'

const open = { additionalProperties: true } as const

const JsonObject = t.Record(t.String(), t.Unknown())

// ── Request ────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Inline media: an image, audio (audio/wav, audio/mp3…), or a document (application/pdf, text/plain…). For models of other
 * vendors, images become their image input, audio OpenAI `input_audio`, documents OpenAI `file` or Anthropic `document`.
 */
export const GeminiBlob = t.Object(
	{
		// Required, but in either spelling: google-genai for Python sends `inlineData: {data, mime_type}` for a part LangChain
		// built (it renames the part's keys, not those of the dict inside), which Google's proto-JSON parser takes, so the
		// decoder checks it (gemini/files.ts) rather than this schema, which sees only the lowerCamel key.
		mimeType: t.Optional(t.String({ description: 'Required (or `mime_type`).' })),
		data: t.String({ description: 'The bytes, base64-encoded.' }),
	},
	open,
)

/**
 * A file by URI: a Files API URI or `gs://` (Gemini models only: refused with a 400 naming the part for other vendors),
 * or a public web URL.
 */
export const GeminiFileData = t.Object(
	{
		mimeType: t.Optional(t.String()),
		// Required in either spelling, as GeminiBlob's `mimeType` (LangChain's Python client sends `fileData: {file_uri, mime_type}`).
		fileUri: t.Optional(t.String({ description: 'Required (or `file_uri`).' })),
	},
	open,
)

export const GeminiFunctionCall = t.Object(
	{ id: t.Optional(t.String()), name: t.String(), args: t.Optional(JsonObject) },
	open,
)

export const GeminiFunctionResponse = t.Object(
	{
		id: t.Optional(t.String()),
		name: t.String(),
		response: t.Optional(JsonObject),
		/** Multimodal function response (Gemini 3): media the function returned, alongside `response`. */
		parts: t.Optional(
			t.Array(t.Object({ inlineData: t.Optional(GeminiBlob), fileData: t.Optional(GeminiFileData) }, open), {
				description: 'Media the function returned (a multimodal function response, Gemini 3 models).',
			}),
		),
	},
	open,
)

/** One part holds exactly one kind of data; `thought` marks thinking text, `thoughtSignature` may ride on any kind. */
export const GeminiPart = t.Object(
	{
		text: t.Optional(t.String()),
		thought: t.Optional(t.Boolean()),
		thoughtSignature: t.Optional(t.String()),
		inlineData: t.Optional(GeminiBlob),
		fileData: t.Optional(GeminiFileData),
		functionCall: t.Optional(GeminiFunctionCall),
		functionResponse: t.Optional(GeminiFunctionResponse),
	},
	open,
)

export const GeminiRole = t.Union([t.Literal('user'), t.Literal('model')])

/** `function` is the legacy role of function-response turns (older docs and SDK samples); it decodes as `user`. */
export const GeminiContent = t.Object(
	{ role: t.Optional(t.Union([GeminiRole, t.Literal('function')])), parts: t.Array(GeminiPart) },
	open,
)

export const GeminiFunctionDeclaration = t.Object(
	{
		name: t.String(),
		description: t.Optional(t.String()),
		parameters: t.Optional(JsonObject),
		parametersJsonSchema: t.Optional(t.Unknown()),
	},
	open,
)

/** A function tool, or a built-in one (`googleSearch`, `codeExecution`, `urlContext`…), which rides in `extra`. */
export const GeminiTool = t.Object({ functionDeclarations: t.Optional(t.Array(GeminiFunctionDeclaration)) }, open)

export const GeminiFunctionCallingMode = t.Union([
	t.Literal('MODE_UNSPECIFIED'),
	t.Literal('AUTO'),
	t.Literal('ANY'),
	t.Literal('NONE'),
	t.Literal('VALIDATED'),
])

export const GeminiToolConfig = t.Object(
	{
		functionCallingConfig: t.Optional(
			t.Object(
				{ mode: t.Optional(GeminiFunctionCallingMode), allowedFunctionNames: t.Optional(t.Array(t.String())) },
				open,
			),
		),
	},
	open,
)

export const GeminiThinkingConfig = t.Object(
	{
		thinkingBudget: t.Optional(Integer()),
		includeThoughts: t.Optional(t.Boolean()),
		/** Gemini 3: MINIMAL | LOW | MEDIUM | HIGH. */
		thinkingLevel: t.Optional(t.String()),
	},
	open,
)

export const GeminiGenerationConfig = t.Object(
	{
		maxOutputTokens: t.Optional(Integer({ minimum: 1 })),
		/** "Values can range from [0.0, 2.0]." */
		temperature: t.Optional(t.Number({ minimum: 0, maximum: 2 })),
		topP: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
		topK: t.Optional(t.Number()),
		/** Gemini gives at most 8 candidates per request (and refuses more). */
		candidateCount: t.Optional(Integer({ minimum: 1, maximum: 8 })),
		seed: t.Optional(Integer()),
		presencePenalty: t.Optional(t.Number()),
		frequencyPenalty: t.Optional(t.Number()),
		responseLogprobs: t.Optional(t.Boolean()),
		/** Top alternatives per token; "only valid if responseLogprobs=True", "in the range of [0, 20]". */
		logprobs: t.Optional(Integer({ minimum: 0, maximum: 20 })),
		/** "The set of character sequences (up to 5) that will stop output generation." */
		stopSequences: t.Optional(t.Array(t.String(), { maxItems: 5 })),
		responseMimeType: t.Optional(t.String()),
		responseSchema: t.Optional(JsonObject),
		responseJsonSchema: t.Optional(t.Unknown()),
		thinkingConfig: t.Optional(GeminiThinkingConfig),
	},
	open,
)

export const GeminiSafetySetting = t.Object({ category: t.String(), threshold: t.String() }, open)

/** Body of `POST /v1beta/models/{model}:generateContent` (and `:streamGenerateContent`). The model is in the URL. */
export const GeminiRequest = t.Object(
	{
		model: t.Optional(t.String()),
		contents: t.Array(GeminiContent),
		systemInstruction: t.Optional(t.Object({ role: t.Optional(t.String()), parts: t.Array(GeminiPart) }, open)),
		tools: t.Optional(t.Array(GeminiTool)),
		toolConfig: t.Optional(GeminiToolConfig),
		generationConfig: t.Optional(GeminiGenerationConfig),
		safetySettings: t.Optional(t.Array(GeminiSafetySetting)),
		cachedContent: t.Optional(t.String()),
		serviceTier: t.Optional(t.String({ description: 'standard, flex or priority: the processing tier, priced apart (Interactions: service_tier)' })),
	},
	open,
)

// ── Response ───────────────────────────────────────────────────────────────────────────────────────────

/** One modality's share of a count (https://ai.google.dev/api/generate-content#ModalityTokenCount): TEXT, IMAGE, AUDIO, VIDEO… */
const ModalityTokenCounts = t.Array(t.Object({ modality: t.String(), tokenCount: Integer() }, open))

export const GeminiUsageMetadata = t.Object(
	{
		/** Includes `cachedContentTokenCount`. */
		promptTokenCount: t.Optional(Integer()),
		cachedContentTokenCount: t.Optional(Integer()),
		/** Excludes thinking: that is `thoughtsTokenCount`, billed as output too. */
		candidatesTokenCount: t.Optional(Integer()),
		thoughtsTokenCount: t.Optional(Integer()),
		toolUsePromptTokenCount: t.Optional(Integer()),
		totalTokenCount: t.Optional(Integer()),
		promptTokensDetails: t.Optional(ModalityTokenCounts),
		cacheTokensDetails: t.Optional(ModalityTokenCounts),
		candidatesTokensDetails: t.Optional(ModalityTokenCounts),
		/** The tier that served the request: `standard`, `flex` or `priority` (priced apart). */
		serviceTier: t.Optional(t.String()),
		toolUsePromptTokensDetails: t.Optional(ModalityTokenCounts),
	},
	open,
)

/**
 * A grounded answer's sources (https://ai.google.dev/api/generate-content#GroundingMetadata): the queries searched, the
 * web pages found (`groundingChunks[].web`), and which spans of the answer's text each supports: a `segment`'s
 * indices are UTF-8 byte offsets into the text (#Segment). `searchEntryPoint` is Google's own rendered search chip.
 */
export const GeminiGroundingMetadata = t.Object(
	{
		webSearchQueries: t.Optional(t.Array(t.String())),
		searchEntryPoint: t.Optional(t.Object({ renderedContent: t.Optional(t.String()) }, open)),
		groundingChunks: t.Optional(t.Array(t.Object({ web: t.Optional(t.Object({ uri: t.Optional(t.String()), title: t.Optional(t.String()) }, open)) }, open))),
		groundingSupports: t.Optional(
			t.Array(
				t.Object(
					{
						segment: t.Optional(t.Object({ startIndex: t.Optional(Integer()), endIndex: t.Optional(Integer()), text: t.Optional(t.String()) }, open)),
						groundingChunkIndices: t.Optional(t.Array(Integer())),
					},
					open,
				),
			),
		),
	},
	open,
)

export const GeminiCandidate = t.Object(
	{
		content: t.Optional(t.Object({ role: t.Optional(t.String()), parts: t.Optional(t.Array(GeminiPart)) }, open)),
		finishReason: t.Optional(t.String()),
		index: t.Optional(Integer()),
		/** With `responseLogprobs`: `chosenCandidates[]` and `topCandidates[].candidates[]` of `{token, logProbability}`. */
		logprobsResult: t.Optional(JsonObject),
		/** With Google Search grounding (a `googleSearch` tool), or another vendor's web search. */
		groundingMetadata: t.Optional(GeminiGroundingMetadata),
	},
	open,
)

/** A whole response, and also one streamed chunk (with `alt=sse` each `data:` frame is one of these). */
export const GeminiResponse = t.Object(
	{
		candidates: t.Optional(t.Array(GeminiCandidate)),
		promptFeedback: t.Optional(t.Object({ blockReason: t.Optional(t.String()) }, open)),
		usageMetadata: t.Optional(GeminiUsageMetadata),
		modelVersion: t.Optional(t.String()),
		responseId: t.Optional(t.String()),
	},
	open,
)

export const GeminiStreamChunk = GeminiResponse

export const GeminiErrorStatus = t.Union([
	t.Literal('INVALID_ARGUMENT'),
	t.Literal('FAILED_PRECONDITION'),
	t.Literal('UNAUTHENTICATED'),
	t.Literal('PERMISSION_DENIED'),
	t.Literal('NOT_FOUND'),
	t.Literal('RESOURCE_EXHAUSTED'),
	t.Literal('INTERNAL'),
	t.Literal('UNAVAILABLE'),
	t.Literal('DEADLINE_EXCEEDED'),
])

export const GeminiErrorBody = t.Object({
	error: t.Object(
		{
			code: Integer(),
			message: t.String(),
			status: GeminiErrorStatus,
			details: t.Optional(t.Array(t.Record(t.String(), t.Unknown()), { description: 'google.rpc details: a RetryInfo ({"@type", retryDelay: "37s"}) when the wait is known; for a refused key an ErrorInfo (reason API_KEY_INVALID, API_KEY_EXPIRED or CONSUMER_SUSPENDED), as Google answers' })),
		},
		open,
	),
})

export type GeminiBlob = typeof GeminiBlob.static
export type GeminiFileData = typeof GeminiFileData.static
export type GeminiFunctionCall = typeof GeminiFunctionCall.static
export type GeminiFunctionResponse = typeof GeminiFunctionResponse.static
export type GeminiPart = typeof GeminiPart.static
export type GeminiRole = typeof GeminiRole.static
export type GeminiContent = typeof GeminiContent.static
export type GeminiFunctionDeclaration = typeof GeminiFunctionDeclaration.static
export type GeminiTool = typeof GeminiTool.static
export type GeminiToolConfig = typeof GeminiToolConfig.static
export type GeminiThinkingConfig = typeof GeminiThinkingConfig.static
export type GeminiGenerationConfig = typeof GeminiGenerationConfig.static
export type GeminiRequest = typeof GeminiRequest.static
export type GeminiUsageMetadata = typeof GeminiUsageMetadata.static
export type GeminiCandidate = typeof GeminiCandidate.static
export type GeminiGroundingMetadata = typeof GeminiGroundingMetadata.static
export type GeminiResponse = typeof GeminiResponse.static
export type GeminiStreamChunk = typeof GeminiStreamChunk.static
export type GeminiErrorStatus = typeof GeminiErrorStatus.static
export type GeminiErrorBody = typeof GeminiErrorBody.static
