/**
 * The canonical model of a chat request and response. Every wire protocol decodes into these types
 * and encodes out of them, so N protocols need N codecs rather than N² converters.
 *
 * Conventions:
 * - Roles are only `user` and `assistant`; tool results are `tool_result` parts in a user message
 *   (OpenAI `role:"tool"` messages are merged into one user turn on decode and split out on encode).
 * - The system prompt is top level, as in Anthropic and Gemini.
 * - Tool-call `input` is always a parsed JSON object (OpenAI's string `arguments` is parsed defensively).
 * - Vendor-only fields that have no canonical slot ride in `extra` so nothing is silently dropped.
 * @module
 */

/** Anthropic-style prompt caching marker; carried through where a vendor understands it. */
export type CacheControl = { type: 'ephemeral'; ttl?: string }

/**
 * A source the text quotes, found by the vendor's web search: Anthropic `web_search_result_location` citations (the whole
 * text block, `citedText` the quoted words), OpenAI `url_citation` annotations and Gemini `groundingSupports` (a span:
 * `start`/`end` are UTF-16 offsets into the part's text, as JavaScript strings count; absent, the whole part).
 */
export type Citation = { url: string; title?: string; citedText?: string; start?: number; end?: number }

export type TextPart = { type: 'text'; text: string; cacheControl?: CacheControl; citations?: Citation[] }

export type ImageSource =
	| { kind: 'url'; url: string }
	| { kind: 'base64'; mediaType: string; data: string }

export type ImagePart = { type: 'image'; source: ImageSource; detail?: string; cacheControl?: CacheControl }

/**
 * Where a file's bytes are. Each vendor takes only some kinds; an encoder that cannot send one refuses the part with a
 * 400 naming it (WIRE-NOTES #8) rather than dropping it.
 * - `base64`: the bytes inline with their media type (a PDF, a text file…): OpenAI `file.file_data` (a data URL),
 *   Anthropic `document` base64 (PDF) source, Gemini `inlineData`.
 * - `text`: a plain-text document's text (Anthropic `source.type: "text"`, media type text/plain).
 * - `url`: a public http(s) URL (Anthropic `url` source, a PDF; Gemini `fileData` with a web URL).
 * - `content`: Anthropic's custom-content document, text and image blocks cited one by one.
 * - `file_id`: a file in one vendor's file store (OpenAI `file.file_id`; Anthropic Files API `source.type: "file"`),
 *   readable by that vendor only.
 * - `uri`: a Gemini file reference (`fileData.fileUri`: a Files API URI or `gs://`), readable by Gemini only.
 */
export type FileSource =
	| { kind: 'base64'; mediaType: string; data: string }
	| { kind: 'text'; text: string }
	| { kind: 'url'; url: string; mediaType?: string }
	| { kind: 'content'; content: Array<TextPart | ImagePart> }
	| { kind: 'file_id'; id: string; store: 'openai' | 'anthropic' }
	| { kind: 'uri'; uri: string; mediaType?: string }

/**
 * A file or document given as input (OpenAI `file` part, Anthropic `document` block, Gemini non-image `inlineData` /
 * `fileData`). `path` is where the client put it (`messages[0].content[1]`, `contents[0].parts[1]`), so an encoder
 * that cannot send it names the part in its refusal.
 */
export type FilePart = {
	type: 'file'
	source: FileSource
	/** OpenAI `file.filename`. */
	filename?: string
	/** Anthropic `title` and `context`; kept as text where a plain-text document becomes a text part. */
	title?: string
	context?: string
	/** Anthropic `citations.enabled`. */
	citations?: boolean
	cacheControl?: CacheControl
	path?: string
}

/**
 * Audio given as input: OpenAI `input_audio` (`format` wav | mp3 ⇄ audio/wav | audio/mp3), Gemini audio `inlineData`.
 * `data` is base64; `path` as in FilePart.
 */
export type AudioPart = { type: 'audio'; mediaType: string; data: string; path?: string }

/** A call the model made. `signature` carries an opaque vendor token tied to the call (Gemini `thoughtSignature`). */
export type ToolCallPart = {
	type: 'tool_call'
	id: string
	name: string
	input: Record<string, unknown>
	signature?: string
	cacheControl?: CacheControl
}

export type ToolResultPart = {
	type: 'tool_result'
	toolCallId: string
	/** The tool's name when the protocol carries it (Gemini `functionResponse.name` needs it). */
	name?: string
	content: Array<TextPart | ImagePart | FilePart | AudioPart>
	isError?: boolean
	cacheControl?: CacheControl
}

/**
 * Model reasoning. `signature` must be replayed verbatim to the vendor that produced it: Anthropic's as it came, any
 * other vendor's behind an origin tag (core/signatures.ts). Text may be empty.
 */
export type ThinkingPart = { type: 'thinking'; text: string; signature?: string }

/** Encrypted reasoning (Anthropic `redacted_thinking.data`, OpenAI `reasoning.encrypted`). */
export type RedactedThinkingPart = { type: 'redacted_thinking'; data: string }

/**
 * A call to a tool of a remote MCP server, run by the MCP client (Anthropic's MCP connector, or the gateway's own
 * agent loop for other vendors: src/mcp), not by the caller. Answers only; Anthropic `mcp_tool_use`.
 */
export type McpToolUsePart = { type: 'mcp_tool_use'; id: string; serverName: string; name: string; input: Record<string, unknown> }

/** The MCP server's answer to an `mcp_tool_use` (Anthropic `mcp_tool_result`); `isError` when the call failed. */
export type McpToolResultPart = { type: 'mcp_tool_result'; toolUseId: string; isError: boolean; content: TextPart[] }

/** A page a web search found (Anthropic `web_search_result`, OpenAI `action.sources[]`, Gemini `groundingChunks[].web`). */
export type WebSource = { url: string; title?: string; pageAge?: string }

/**
 * A web search the vendor ran with its built-in tool (Anthropic `server_tool_use` + `web_search_tool_result`, OpenAI
 * `web_search_call`, Gemini `groundingMetadata.webSearchQueries` + `groundingChunks`). Answers only: replayed to a
 * vendor it is left out (none takes another's search record back, and the text with its citations stays).
 */
export type WebSearchPart = { type: 'web_search'; id: string; queries: string[]; sources: WebSource[] }

export type Part = TextPart | ImagePart | FilePart | AudioPart | ToolCallPart | ToolResultPart | ThinkingPart | RedactedThinkingPart

export type Role = 'user' | 'assistant'

export type Message = { role: Role; content: Part[] }

export type Tool = {
	name: string
	description?: string
	/** JSON Schema of the arguments object. */
	parameters: Record<string, unknown>
	/** OpenAI `strict`. */
	strict?: boolean
	cacheControl?: CacheControl
}

/**
 * The vendors' built-in web search, run by whichever vendor serves the model: OpenAI Responses `web_search` /
 * `web_search_preview`, Chat `web_search_options`, Anthropic's `web_search_*` server tool, Gemini `googleSearch`.
 * What each takes of the settings: Anthropic all (`max_uses`, `allowed_domains` / `blocked_domains`, `user_location`),
 * OpenAI Responses the allowed domains and the location, Chat the location, Gemini none of them.
 */
export type WebSearch = {
	/** Searches allowed in one answer (Anthropic `max_uses`; Responses `max_tool_calls`, which caps built-in tool calls). */
	maxUses?: number
	allowedDomains?: string[]
	blockedDomains?: string[]
	userLocation?: { city?: string; region?: string; country?: string; timezone?: string }
	/** The caller's tool choice named the search (Responses `{type:"web_search"}`, Anthropic `{type:"tool",name:"web_search"}`). */
	forced?: true
}

/**
 * `validated` on auto: Gemini's VALIDATED mode (the model answers in text or calls, its calls held to their schemas by
 * constrained decoding: https://ai.google.dev/api/caching#FunctionCallingConfig), sent to Gemini as such; auto elsewhere.
 */
export type ToolChoice = { type: 'auto'; validated?: true } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string }

export type ResponseFormat =
	| { type: 'text' }
	| { type: 'json_object' }
	| {
			type: 'json_schema'
			name: string
			schema: Record<string, unknown>
			strict?: boolean
			description?: string
			/** The client's vendor enforces the schema (Claude, Gemini): ask the same of another where the schema allows. */
			enforced?: true
	  }

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high'

/**
 * Reasoning settings. A codec fills what its protocol says; the encoder of another protocol derives the
 * rest with `effortToBudget` / `budgetToEffort` (core/reasoning.ts).
 */
export type Reasoning = { enabled: boolean; effort?: ReasoningEffort; budgetTokens?: number; includeThoughts?: boolean }

/**
 * Something in the client's request only its own vendor can take: `protocol` is the client's protocol, `what` names
 * it for a refusal ("server tool web_search_20250305", "a search_result block"), `path` is where it stood.
 * `lost`: it names state only that vendor keeps (an Anthropic message thread to continue), so another vendor answers
 * as that vendor does for state it no longer has: a 404 with this `error_code`, which the client's SDK recovers from.
 */
export type VendorOnly = { protocol: string; what: string; path: string; lost?: string }

/** Google's processing tiers (ai.google.dev/gemini-api/docs/optimization). */
export type GoogleTier = 'standard' | 'flex' | 'priority'

export type ChatRequest = {
	/** The model as the client named it. */
	model: string
	system?: TextPart[]
	messages: Message[]
	tools?: Tool[]
	toolChoice?: ToolChoice
	/** The vendor's built-in web search, offered beside the function tools. */
	webSearch?: WebSearch
	/**
	 * The processing tier a Google client asked for (generateContent's `serviceTier`, Interactions' `service_tier`),
	 * which Google's two APIs share with one price list: only their encoders write it. Other vendors' tiers differ in
	 * kind (OpenAI's project default, Anthropic's fast mode) and are not converted.
	 */
	googleTier?: GoogleTier
	parallelToolCalls?: boolean
	maxTokens?: number
	temperature?: number
	topP?: number
	topK?: number
	/** Sampling seed, for best-effort determinism (OpenAI `seed`, Gemini `generationConfig.seed`). */
	seed?: number
	/** OpenAI `presence_penalty` / Gemini `presencePenalty` (OpenAI: -2 to 2). */
	presencePenalty?: number
	/** OpenAI `frequency_penalty` / Gemini `frequencyPenalty` (OpenAI: -2 to 2). */
	frequencyPenalty?: number
	/** Return the output tokens' log probabilities (OpenAI `logprobs`, Gemini `responseLogprobs`). */
	logprobs?: boolean
	/** How many alternatives per token come with them, 0 to 20 (OpenAI `top_logprobs`, Gemini `logprobs`). */
	topLogprobs?: number
	stop?: string[]
	responseFormat?: ResponseFormat
	reasoning?: Reasoning
	stream: boolean
	/**
	 * How many alternative answers (OpenAI `n`, Gemini `candidateCount`), when more than one. The canonical answer has
	 * one: a vendor that gives several in one call is asked for them and each read by index, any other is asked once
	 * per answer, and the client's codec merges them (src/relay/choices.ts); the reservation covers all of them.
	 */
	choices?: number
	/** End-user id for abuse tracking (OpenAI `user`, Anthropic `metadata.user_id`). */
	user?: string
	/**
	 * What only the client's vendor can take: tools it runs on its own servers (Anthropic server tools such as
	 * `web_search_20250305`, Gemini `googleSearch`, `codeExecution`…) and input blocks with no canonical form (an
	 * Anthropic `search_result`). They travel in `extra`, so only the same protocol re-emits them; an encoder of another
	 * protocol refuses the request rather than drop them silently (WIRE-NOTES #8; protocols/vendor-only.ts).
	 */
	vendorOnly?: VendorOnly[]
	/**
	 * OpenAI's prompt-cache hint (`prompt_cache_key`, `prompt_cache_retention`), from a client of its protocols. OpenAI
	 * caches on its own; Claude caches only when asked, which relay/auto-cache.ts decides from it (the fields themselves
	 * stay in `extra`, for OpenAI upstreams).
	 */
	promptCache?: { key?: string; retention?: string }
	/**
	 * Cache the whole prompt, the breakpoint at its last cacheable block (Anthropic's automatic caching), at a vendor
	 * whose cache must be asked for: set by relay/auto-cache.ts for a request with no breakpoints of its own.
	 */
	cacheAll?: CacheControl
	/** Fields of the source protocol with no canonical slot; only re-emitted to the same protocol. */
	extra?: Record<string, unknown>
}

/**
 * Why generation stopped, in Anthropic's vocabulary (the richest of the three).
 * Mapping to OpenAI: end_turn|stop_sequence|pause_turn → stop, max_tokens → length, tool_use → tool_calls,
 * refusal|content_filter → content_filter.
 */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'content_filter'

/**
 * Token usage, normalised. `input` EXCLUDES cache reads and writes (Anthropic semantics), so the total prompt is
 * input + cacheRead + cacheWrite. OpenAI `prompt_tokens` and Gemini `promptTokenCount` include cached tokens:
 * their decoders subtract. `output` INCLUDES reasoning tokens; `reasoning` is the part of `output` spent thinking.
 */
export type Usage = {
	input: number
	output: number
	cacheRead: number
	cacheWrite: number
	reasoning: number
	/**
	 * Parts of the counts above that vendors price apart, when the upstream reports them (each a share of a total,
	 * never an addition to it): audio in the uncached `input` (OpenAI `prompt_tokens_details.audio_tokens`, Gemini
	 * `promptTokensDetails` AUDIO), audio and image tokens in `output` (OpenAI `completion_tokens_details.audio_tokens`,
	 * Gemini `candidatesTokensDetails` AUDIO / IMAGE), and the cache writes kept longer than the vendor's default in
	 * `cacheWrite` (`cacheWriteLong`: Anthropic's 1-hour ones, `cache_creation.ephemeral_1h_input_tokens`; OpenAI's
	 * 12-hour ones, `cache_write_tokens_details.ttl_12h_tokens`), priced above the default's; image tokens in the uncached `input` of OpenAI's GPT image models
	 * (Images API `usage.input_tokens_details.image_tokens`) and of Gemini (`promptTokensDetails` IMAGE).
	 */
	audioInput?: number
	/** Audio in `cacheRead` (Gemini `cacheTokensDetails` AUDIO), which Gemini prices apart from cached text. */
	audioCacheRead?: number
	imageInput?: number
	audioOutput?: number
	imageOutput?: number
	cacheWriteLong?: number
	/**
	 * Tokens in `input` that a vendor's built-in tools fed back to the model (Gemini `toolUsePromptTokenCount`,
	 * Interactions `total_tool_use_tokens`: search results and the like): a share of `input`, billed as input, shown
	 * apart to Gemini and Interactions clients as Google shows them.
	 */
	toolUseInput?: number
	/** Web searches a vendor's built-in tool ran for the request, which it bills per search (Anthropic `server_tool_use.web_search_requests`, OpenAI Responses `web_search_call` items). */
	webSearches?: number
	/**
	 * The processing tier that served the request when it is one priced apart (OpenAI `service_tier` of the answer,
	 * Anthropic `usage.speed`).
	 */
	tier?: ServiceTier
	/** Where the vendor ran the request when that is priced apart: Anthropic's US-only inference (`usage.inference_geo: "us"`). */
	inferenceGeo?: 'us'
}

/**
 * The processing tiers priced apart from the standard one: OpenAI's Priority (renamed Fast mode; asked as `priority`
 * or `fast`, reported as `priority`), Flex and Ultrafast (`service_tier`: developers.openai.com/api/docs/pricing), and
 * Anthropic's fast mode (`speed: "fast"`, reported in `usage.speed`: platform.claude.com/docs/en/build-with-claude/fast-mode).
 */
export type ServiceTier = 'priority' | 'flex' | 'ultrafast' | 'fast'

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 })

/**
 * The usage of several calls made for one request (one per answer: src/relay/choices.ts), field by field; the tier and
 * the geography are the first call's that names one.
 * @example sumUsage([{ input: 3, output: 1 }, { input: 3, output: 2 }]).output === 3
 */
export function sumUsage(parts: Array<Partial<Usage>>): Usage {
	const total: Usage = emptyUsage()
	for (const u of parts)
		for (const [k, v] of Object.entries(u) as Array<[keyof Usage, Usage[keyof Usage]]>) {
			if (typeof v === 'number') Object.assign(total, { [k]: ((total[k] as number | undefined) ?? 0) + v })
			else if (v !== undefined) Object.assign(total, { [k]: total[k] ?? v })
		}
	return total
}

/** Total prompt tokens as OpenAI and Gemini count them. */
export const promptTokens = (u: Usage): number => u.input + u.cacheRead + u.cacheWrite

export type ChatResponse = {
	id: string
	model: string
	/** Unix seconds. */
	created?: number
	content: Array<TextPart | ToolCallPart | ThinkingPart | RedactedThinkingPart | McpToolUsePart | McpToolResultPart | WebSearchPart>
	stopReason: StopReason
	stopSequence?: string
	/** Why the model refused (`stopReason` `refusal`), when the upstream said: Anthropic's `stop_details.explanation`. */
	refusal?: string
	usage: Usage
	/** The answer tokens' log probabilities, when the request asked for them (whole answers; streams do not carry them). */
	logprobs?: TokenLogprob[]
}

/**
 * One output token's log probability, with the most likely tokens at its position (OpenAI `logprobs.content[]`,
 * Gemini `logprobsResult.chosenCandidates[]` + `topCandidates[]`).
 */
export type TokenLogprob = { token: string; logprob: number; top: Array<{ token: string; logprob: number }> }
