/**
 * The contract every wire protocol implements once. A codec is used on both sides of the gateway:
 * client side (decodeRequest → … → encodeResponse / encodeStream) and upstream side
 * (encodeRequest → … → decodeResponse / decodeStream).
 * @module
 */
import type { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import type { ChatRequest, ChatResponse, ServiceTier, Usage } from '../core/ir'
import type { SseFrame } from '../core/sse'
import type { EventEncoder, FrameDecoder, StreamMachine } from './stream-machine'

/** `bedrock-converse` is spoken by upstreams only (an UpstreamCodec): no client route takes it. */
export type ProtocolName = 'openai-chat' | 'anthropic-messages' | 'gemini' | 'openai-responses' | 'gemini-interactions' | 'bedrock-converse'

/** What a client-side encoder needs to know beyond the events themselves. */
export type EncodeContext = {
	/** The model name to show the client (the one it asked for). */
	model: string
	/** OpenAI: the client asked for `stream_options.include_usage`, so emit the final usage chunk. */
	includeUsage?: boolean
	/**
	 * The request's `Reasoning.includeThoughts`. Gemini: thought parts only when true, as Gemini gives them; otherwise
	 * the thinking is carried hidden (gemini/carried-thinking.ts).
	 */
	includeThoughts?: boolean
	/** Counts the prompt tokens locally, for protocols that must state input usage before upstream reports it
	 * (Anthropic `message_start.message.usage.input_tokens`). Called only then: counting loads the tokenizer. */
	countInputTokens?: () => number
	/**
	 * One of several answers (OpenAI `n`, Gemini `candidateCount`): the index to show (`choices[].index`,
	 * `candidates[].index`). The stream's closing (usage, terminator) is then the choices encoder's, not this one's.
	 */
	choice?: number
}

export type EncodedError = { status: number; body: unknown; headers?: Record<string, string> }

/**
 * A response header in which the vendor names the tier that served the request (Gemini's `x-gemini-service-tier`,
 * which its docs check for a Priority request run as standard over its limit, and which @ai-sdk/google reads when the
 * body has no `serviceTier`): `decode` reads its value, `encode` writes the canonical tier in its words.
 */
export type TierHeader = { name: string; decode(value: string): ServiceTier | undefined; encode(tier: ServiceTier | undefined): string }

/** What the upstream channel can take beyond the protocol's baseline (the adapter decides: providers/adapter.ts). */
export type UpstreamOptions = {
	/**
	 * A JSON response format goes as the vendor's own constrained decoding (Claude's `output_config.format`), not as
	 * an instruction in the system prompt. Not every model or Anthropic-compatible vendor has it.
	 */
	nativeStructuredOutputs?: boolean
	/** Tool call ids must be nine letters or digits (Mistral's API and templates); others are mapped to such. */
	toolCallIds?: 'alnum9'
	/**
	 * OpenAI-compatible vendors that continue a final assistant message marked `prefix: true` (chat prefix completion):
	 * DeepSeek answers with the continuation alone, Mistral with the prefix repeated before it (`echoed`).
	 */
	prefix?: 'continued' | 'echoed'
	/**
	 * false: the model takes no reasoning effort (an OpenAI model that does not reason refuses it with a 400), so the
	 * thinking another protocol's client asked for is not asked upstream and the model answers without it.
	 */
	reasoningEffort?: boolean
	/**
	 * The model refuses sampling settings (OpenAI's reasoning models: temperature, top_p, the penalties, logprobs), so
	 * those another protocol's client set are left out, as the effort is for a model that does not reason.
	 */
	fixedSampling?: true
	/**
	 * The model takes thinking as adaptive only, not as a token budget (Claude Opus 4.7 and later), and, `always`, cannot
	 * have it turned off (Claude Fable, Opus 5.5): the effort goes as `output_config.effort` (routing/claude-models.ts).
	 */
	adaptiveThinking?: 'only' | 'always'
	/**
	 * The reasoning efforts the model takes (OpenAI's models each take some of none, minimal, low, medium, high, xhigh:
	 * routing/reasoning-models.ts), where the adapter knows: another protocol's effort goes as the nearest of them.
	 */
	efforts?: readonly string[]
	/**
	 * The foundation model the upstream id stands for when the id names none (a Bedrock application inference profile's
	 * ARN: the channel's `settings.base_models`), so the model family's own fields are asked for it.
	 */
	foundationModel?: string
	/**
	 * The Amazon Bedrock guardrail the channel applies to every call (providers/bedrock-guardrail.ts), for Converse's
	 * `guardrailConfig`.
	 */
	guardrail?: UpstreamGuardrail
	/**
	 * false: the vendor takes no request-level `cache_control` (Anthropic's automatic caching is documented for Claude's
	 * own API), so a request caching its whole prompt (ChatRequest.cacheAll) marks the last block of its last message.
	 */
	requestCacheControl?: false
}

/** An Amazon Bedrock guardrail, as Converse's `GuardrailStreamConfiguration` words it (trace and stream mode optional). */
export type UpstreamGuardrail = { identifier: string; version: string; trace?: 'enabled' | 'disabled' | 'enabled_full'; streamMode?: 'sync' | 'async' }

/**
 * An event of one of several answers, by its index. A `usage` event stands for the whole request (all the answers),
 * cumulative like any usage event.
 */
export type ChoiceEvent = { choice: number; event: StreamEvent }

/** Several answers' events → one client stream (the choices interleaved as they come; one closing). */
export type ChoicesEncoder = StreamMachine<ChoiceEvent, SseFrame>

export interface ProtocolCodec<WireReq = any, WireRes = any> {
	readonly name: ProtocolName
	/**
	 * The protocol has no default output cap and refuses a request without one (Anthropic: "max_tokens: Field
	 * required"): a converted request always carries the cap the relay reserved for.
	 */
	readonly requiresMaxTokens?: boolean
	/**
	 * The vendor refuses a request whose prompt tokens plus output cap exceed the model's context window, however short
	 * the answer would be (Anthropic since Claude 3.7 Sonnet: "input length and `max_tokens` exceed context limit"): a
	 * cap the gateway chooses is fitted to the window (src/relay/output-limit.ts).
	 */
	readonly capWithinContext?: true
	/**
	 * One call gives several answers (OpenAI `n`, Gemini `candidateCount`): `encodeRequest` asks for `choices`, and
	 * `decodeResponse` / `streamDecoder` read any one of them by its index. A protocol without it is asked once per
	 * answer (src/relay/choices.ts).
	 */
	readonly severalAnswers?: true
	/** The most answers one such call gives (Gemini's `candidateCount`: 8); unset, no most the gateway knows (OpenAI's `n`: 128, its own check). */
	readonly mostAnswers?: number
	/**
	 * The header the vendor names the serving tier in: read from an upstream's answer for its bill when the body does
	 * not say, passed on to a client of the same protocol, and written on an answer converted for one.
	 */
	readonly tierHeader?: TierHeader
	/**
	 * How many stop sequences the vendor takes for `model` (OpenAI chat 4 and none on its reasoning models, Gemini 5,
	 * Responses none); unset, no limit. A converted request sends the first ones and the gateway enforces the rest on
	 * the output text itself (src/relay/stop-sequences.ts).
	 */
	stopsTaken?(model: string): number
	/**
	 * Whether the vendor refuses `stop` whatever the model (Anthropic: a sequence empty or only whitespace). Another
	 * protocol's client's such sequence is enforced by the gateway instead (src/relay/stop-sequences.ts); a client of
	 * this protocol gets the vendor's answer to it.
	 */
	stopRefused?(stop: string): boolean
	/** Client body → canonical request. Throws GatewayError('invalid_request') on what the protocol forbids. */
	decodeRequest(body: WireReq, opts?: { stream?: boolean }): ChatRequest
	/** Canonical request → upstream body, with `model` set to the upstream model name. */
	encodeRequest(req: ChatRequest, model: string, upstream?: UpstreamOptions): WireReq
	/** Upstream body → canonical response: the answer at `choice` (0 when not given) of a body with several. */
	decodeResponse(body: WireRes, choice?: number): ChatResponse
	/** Canonical response → client body. */
	encodeResponse(res: ChatResponse, ctx: EncodeContext): WireRes
	/** Upstream SSE frames → canonical events (always ends with `finish` or `error` when the stream is whole). */
	decodeStream(frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent>
	/** Canonical events → client SSE frames (including the protocol's terminator, e.g. `[DONE]`). */
	encodeStream(events: AsyncIterable<StreamEvent>, ctx: EncodeContext): AsyncGenerator<SseFrame>
	/**
	 * The same decoding as a synchronous machine, one frame at a time (stream-machine.ts): what relays use. `choice`:
	 * the answer to read of a stream with several (0 when not given); usage is still the whole stream's.
	 */
	streamDecoder(choice?: number): FrameDecoder
	/** The same encoding as a synchronous machine, one event at a time. */
	streamEncoder(ctx: EncodeContext): EventEncoder
	/**
	 * Several answers (the client asked for them: OpenAI `n`, Gemini `candidateCount`) → one client body: each answer
	 * at its index, `usage` the whole request's. Only protocols whose clients can ask for several have it.
	 */
	encodeChoices?(answers: ChatResponse[], usage: Usage, ctx: EncodeContext): WireRes
	/** The streamed form of `encodeChoices`. */
	choicesEncoder?(ctx: EncodeContext, n: number): ChoicesEncoder
	/**
	 * The first tool call the client's conversation leaves unanswered, or tool result answering no call, as this
	 * protocol's vendor refuses it: in its words, with the client's own indices. Asked only of a request converted for
	 * another vendor, whose refusal would name its own fields (on the fast path the vendor judges).
	 */
	unpairedTools?(body: WireReq): GatewayError | undefined
	/** An error in this protocol's shape and status. */
	encodeError(err: GatewayError): EncodedError
	/** An error as a stream frame (sent when a stream fails after the headers went out). */
	encodeStreamError(err: GatewayError): SseFrame
	/** Reads the usage out of an upstream body of this protocol without a full decode (fast path billing). */
	usageOf(body: WireRes): Usage | undefined
}

/** The members only a client-facing codec has: reading a client's request, writing answers and errors to it. */
type ClientSide = 'decodeRequest' | 'unpairedTools' | 'encodeResponse' | 'encodeStream' | 'streamEncoder' | 'encodeChoices' | 'choicesEncoder' | 'encodeError' | 'encodeStreamError'

/**
 * The upstream half of a codec: what a vendor adapter's protocol is used for (encode the canonical request, decode the
 * vendor's answers whole and streamed). Every ProtocolCodec is one; a protocol no client speaks (Bedrock's Converse)
 * is only this, with no client side to stub.
 */
export type UpstreamCodec = Omit<ProtocolCodec, ClientSide>
