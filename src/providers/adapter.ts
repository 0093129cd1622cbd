/**
 * A vendor adapter is data plus a codec: which wire protocol the vendor speaks, where its endpoints are and which
 * headers authenticate a call. Optional operations are optional properties (ARCHITECTURE seam 2).
 * @module
 */
import type { ChatRequest } from '../core/ir'
import type { UpstreamCodec, UpstreamOptions } from '../protocols/codec'
import type { Channel } from '../routing/catalog'

/**
 * A call as it is about to go out, for the adapter hooks that need its final form: the body is text (the chat paths
 * send JSON), the headers a plain object the hooks may change.
 */
export type UpstreamRequest = { url: string; method: string; headers: Record<string, string>; body?: string }

export type ChatAdapter = {
	protocol: UpstreamCodec
	/** URL of a chat call for this upstream model; `prefill`: a converted request ends with an assistant turn to continue. */
	chatUrl(ch: Channel, model: string, stream: boolean, prefill?: boolean): string
	/** Headers for a call: the channel's credentials, the vendor's version header, and allowed client headers. */
	headers(ch: Channel, inbound?: Headers): Record<string, string>
	/** URL of the vendor's own Responses API, for Responses clients relayed verbatim (OpenAI `{base_url}/responses`). */
	responsesUrl?(ch: Channel): string
	/** What this channel's upstream model can take beyond the protocol's baseline, for converted requests. */
	upstreamOptions?(ch: Channel, model: string): UpstreamOptions
	/**
	 * The adapter a request for this channel's upstream `model` goes through, when the vendor serves it better over
	 * another of its APIs (OpenAI: web search over the Responses API); undefined keeps this one.
	 */
	routeFor?(ch: Channel, model: string, request: ChatRequest): ChatAdapter | undefined
	/**
	 * Speaks Anthropic's protocol without its MCP connector (Bedrock: "not currently available on Amazon Bedrock",
	 * https://platform.claude.com/docs/en/agents-and-tools/mcp-connector): the gateway runs a request's MCP servers itself.
	 */
	withoutMcpConnector?: true
	/**
	 * The body as the vendor's envelope wants it, from the protocol's own (Bedrock: no `model` or `stream`, the API
	 * version and the betas in the body). Runs before `authorize`, which may sign the result.
	 */
	reshape?(ch: Channel, req: UpstreamRequest): void
	/**
	 * Credentials that depend on the final request or are fetched: AWS SigV4 signs the url, method and body hash; an
	 * OAuth token (Google Vertex) is fetched and cached. Called by fetchUpstream for every call made through the adapter,
	 * after `headers` and `reshape`. A GatewayError thrown here fails the attempt as it is. `signal` is the client's: a
	 * call whose client left stops waiting for a token fetch shared with others (cached-token.ts).
	 */
	authorize?(ch: Channel, req: UpstreamRequest, signal?: AbortSignal): Promise<void>
	/**
	 * The vendor's answer as its protocol's wire, when the transport differs (Bedrock streams AWS event-stream frames:
	 * re-framed as the protocol's SSE). Called on every response of a call made through the adapter, with its channel.
	 */
	answer?(res: Response, ch?: Channel): Response
	/**
	 * After a 401: whether to make the call once more with the credentials `authorize` then sets (Vertex: a cached
	 * OAuth token the vendor no longer takes is dropped, and a fresh one fetched). Asked at most once per call.
	 */
	reauthorize?(ch: Channel, req: UpstreamRequest): boolean
	/**
	 * After a 400: whether `req` was changed so that the vendor takes it (Anthropic betas a cloud refused:
	 * platform-betas.ts); the call is then made again, with the credentials `authorize` sets for the changed request.
	 * `res` is a copy of the answer, read here. Asked at most twice per call.
	 */
	refused?(ch: Channel, req: UpstreamRequest, res: Response): Promise<boolean>
	/**
	 * The adapter of one upstream model on `ch`, for a vendor that serves its models over different protocols (Vertex
	 * AI: Claude over Anthropic's Messages, Gemini over Gemini's; Bedrock: an application inference profile's by the
	 * model the channel's `settings.base_models`, else Bedrock, says it serves: registry.ts `adaptersReady` first).
	 * Read through registry.ts `chatAdapterOf`.
	 */
	forModel?(model: string, ch: Channel): ChatAdapter
}

/** The channel and adapter a call goes through (fetchUpstream's `ch` and `adapter`): what runs its reshape, authorize and answer hooks. */
export type Via = { ch: Channel; adapter: ChatAdapter }

/** The hooks fetchUpstream runs around one call: a chat adapter's, or only the credential hooks for calls that are not chat. */
export type CallHooks = Pick<ChatAdapter, 'reshape' | 'authorize' | 'reauthorize' | 'refused' | 'answer'>

/**
 * The channel and credential hooks of a call that is not chat (embeddings, images, audio, Responses…), as fetchUpstream
 * takes them: an Azure channel's Entra ID token is fetched so. Empty for the types whose headers carry their key.
 */
export type CallVia = { ch?: Channel; adapter?: CallHooks }

/** Joins a base URL and a path without doubling or dropping the slash. */
export const joinUrl = (base: string, path: string) => base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`)

/** Extra headers configured on the channel (`settings.headers`), e.g. OpenRouter's HTTP-Referer. */
export function channelHeaders(ch: Channel): Record<string, string> {
	const h = ch.settings.headers
	if (!h || typeof h !== 'object') return {}
	const out: Record<string, string> = {}
	for (const [k, v] of Object.entries(h as Record<string, unknown>)) if (typeof v === 'string') out[k.toLowerCase()] = v
	return out
}
