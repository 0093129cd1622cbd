/**
 * What a request can make its answer cost beyond text, read from the request so that its reservation prices only the
 * token kinds it can produce (billing/pricing.ts `Reach`): a text request to an audio model is not reserved as if it
 * answered in audio. Read only for a model that lists such prices: for any other the bound is the text bound anyway,
 * and the fast path pays nothing.
 * @module
 */
import { type Reach, TIER_PRICE_NAMES, TOKEN_PRICES, UNASKED_TIERS, WEB_SEARCH_PRICE } from '../billing/pricing'
import type { ChatRequest, FilePart, Part, ServiceTier } from '../core/ir'
import type { ProtocolCodec } from '../protocols/codec'
import { get } from '../protocols/gemini/read'
import { askedTier } from '../protocols/gemini/usage'
import { isObject as isObj } from '../protocols/openai-chat/guards'
import { channelHeaders } from '../providers/adapter'
import { chatAdapterOf } from '../providers/registry'
import type { Channel } from '../routing/catalog'
import type { Route } from './budget'

export type ReachCall = { ir: ChatRequest; body: Record<string, unknown>; client: Pick<ProtocolCodec, 'name'>; raw?: string }

/** The request's reach, or undefined (every kind the model prices) when the model prices none of them apart. */
export function reachOf(call: ReachCall, route: Route): Reach | undefined {
	const prices = route.price.prices
	if (!prices) return undefined
	const priced = (name: string) => prices[name] !== undefined
	const audioIn = priced(TOKEN_PRICES.audioInput)
	const audioOut = priced(TOKEN_PRICES.audioOutput)
	const writeLong = priced(TOKEN_PRICES.cacheWrite1h) || priced(TOKEN_PRICES.cacheWrite12h)
	const tiers = TIER_PRICE_NAMES.some(priced)
	const searches = priced(WEB_SEARCH_PRICE)
	if (!audioIn && !audioOut && !writeLong && !tiers && !searches) return undefined
	const reach: Reach = {
		audioInput: audioIn && carriesAudio(call.ir),
		audioOutput: audioOut && asksAudio(call, route.channels),
		// Anthropic `cache_control: {type: "ephemeral", ttl: "1h"}` on any block, tool or the request itself (its default
		// is 5 minutes: docs.anthropic.com/en/docs/build-with-claude/prompt-caching#1-hour-cache-duration), OpenAI
		// `prompt_cache_options.ttl: "12h"` or a `prompt_cache_breakpoint` of that TTL (the default is 30 minutes:
		// openai-node 7.59 `PromptCacheOptions`). Searched in the body's text as received (an agent's body is ~100 KB:
		// serialising it again per request is not free); the same inside a string value has escaped quotes and does not match.
		// An OpenAI client's `prompt_cache_retention: "24h"` has Claude cache for an hour (auto-cache.ts). Neither where
		// no channel can write for longer: Converse's cache points go without a TTL (protocols/bedrock-converse).
		cacheWriteLong:
			writeLong && route.channels.some((ch) => writesLonger(ch, call.ir.model)) && (call.ir.promptCache?.retention === '24h' || LONG_TTL.test(call.raw ?? JSON.stringify(call.body))),
	}
	if (searches) {
		const n = searchesAllowed(call.body)
		if (n) reach.webSearches = n
	}
	if (tiers) {
		const only = tiersAsked(call, route.channels)
		if (only) reach.tiers = only
	}
	return reach
}

/**
 * Audio among the input parts: OpenAI `input_audio`, Gemini audio data, and files that may hold audio (audio or video:
 * Gemini counts a video's sound track as AUDIO tokens; a file of unknown type, by id or URL, may be either).
 */
function carriesAudio(ir: ChatRequest): boolean {
	const audible = (p: Part | FilePart): boolean => {
		if (p.type === 'audio') return true
		if (p.type === 'tool_result') return p.content.some(audible)
		if (p.type !== 'file') return false
		const s = p.source
		if (s.kind === 'text' || s.kind === 'content') return false
		const type = s.kind === 'file_id' ? undefined : s.mediaType?.toLowerCase()
		return type === undefined || type.startsWith('audio/') || type.startsWith('video/')
	}
	return ir.messages.some((m) => m.content.some(audible))
}

/**
 * Audio asked for as output: OpenAI `modalities` with "audio" (platform.openai.com/docs/guides/audio), Gemini
 * `generationConfig.responseModalities` with AUDIO or a `speechConfig`, or a text-to-speech model, which answers in
 * audio whatever it is asked (Gemini `gemini-2.5-flash-preview-tts`: ai.google.dev/gemini-api/docs/speech-generation).
 */
function asksAudio(call: ReachCall, channels: Channel[]): boolean {
	const lists = [call.body.modalities]
	// As Google reads them: of two spellings, the one written last (@google/genai sends an empty `generationConfig`
	// beside a `generation_config` given in `extraBody`).
	const cfg = get(call.body, 'generationConfig')
	if (isObj(cfg)) {
		if (get(cfg, 'speechConfig') !== undefined) return true
		lists.push(get(cfg, 'responseModalities'))
	}
	if (lists.some((l) => Array.isArray(l) && l.some((m) => typeof m === 'string' && m.toLowerCase() === 'audio'))) return true
	const model = call.ir.model
	return TTS.test(model) || channels.some((ch) => TTS.test(ch.modelMap[model] ?? model))
}

const TTS = /(?:^|[-_./])tts(?:$|[-_.])/i

const LONG_TTL = /"ttl"\s*:\s*"(?:1h|12h)"/

/** Whether `ch` may write a longer-lived cache entry for `model`: any protocol but Converse, whose cache points carry no TTL here. */
const writesLonger = (ch: Channel, model: string): boolean => chatAdapterOf(ch, model)?.protocol.name !== 'bedrock-converse'

/**
 * The tiers that may serve the request when it names one every channel of the model receives as written (OpenAI
 * `service_tier`, Gemini `serviceTier`: "flex" or "priority" is processed at that tier, "default" or Gemini's
 * "standard" at the standard one); undefined when it
 * may be any a request gets unasked (`UNASKED_TIERS`). A request that names none, or "auto", gets the project's
 * default tier, which may be Priority (developers.openai.com/api/docs/guides/priority-processing), and one sent
 * converted to another protocol names none. Priority may fall back to the standard tier (its ramp-rate limit), so it
 * bounds as "any". OpenAI's "ultrafast" and Anthropic's `speed: "fast"` add their tier to those, wherever the request
 * goes: a bound that prices a tier no channel would serve only holds more.
 */
function tiersAsked(call: ReachCall, channels: Channel[]): ReadonlyArray<ServiceTier | undefined> | undefined {
	const premium = PREMIUM.filter(([tier, field, value]) => call.body[field] === value).map(([tier]) => tier)
	if (premium.length > 0) return [...UNASKED_TIERS, ...premium]
	const asked = tierNamed(call)
	if (asked !== 'flex' && asked !== 'default') return undefined
	if (!channels.every((ch) => receivesAsWritten(call, ch))) return undefined
	return asked === 'flex' ? FLEX : STANDARD
}

/**
 * The tier a request names in its protocol's words: OpenAI's `service_tier`, Gemini's `serviceTier` and Interactions'
 * `service_tier` (`standard` is Google's default tier; ai.google.dev/gemini-api/docs/optimization). Other protocols
 * name none.
 */
function tierNamed(call: ReachCall): unknown {
	if (call.client.name === 'openai-chat' || call.client.name === 'openai-responses') return call.body.service_tier
	if (call.client.name !== 'gemini' && call.client.name !== 'gemini-interactions') return undefined
	const asked = askedTier(call.body.serviceTier ?? call.body.service_tier)
	return asked === 'standard' ? 'default' : asked
}

/** The tiers only a request that asks for them gets, with the field and value that ask. */
const PREMIUM: ReadonlyArray<readonly [ServiceTier, string, string]> = [
	['ultrafast', 'service_tier', 'ultrafast'],
	['fast', 'speed', 'fast'],
]

const FLEX: ReadonlyArray<ServiceTier | undefined> = ['flex']
const STANDARD: ReadonlyArray<ServiceTier | undefined> = [undefined]

/**
 * Whether the channel gets the client's own fields: it speaks the client's protocol (chat completions), or has the
 * Responses API a Responses request goes to verbatim (modules/responses/native.ts `responsesUrlOf`).
 */
function receivesAsWritten(call: ReachCall, ch: Channel): boolean {
	const adapter = chatAdapterOf(ch, call.ir.model)
	if (!adapter || setsTier(ch)) return false
	if (call.client.name === 'openai-responses') return ch.settings.responses_api !== false && adapter.responsesUrl !== undefined
	// Google's two APIs take the tier either way (ChatRequest `googleTier`): generateContent, or Interactions for a
	// channel with `interactions_api`.
	if (call.client.name === 'gemini-interactions') return adapter.protocol.name === 'gemini'
	return adapter.protocol.name === call.client.name
}

/**
 * A channel that asks for a tier itself, in a header its `settings.headers` send on every call (Vertex's Priority and
 * Flex PayGo: `X-Vertex-AI-LLM-Shared-Request-Type`), whatever the request names.
 */
const setsTier = (ch: Channel): boolean => 'x-vertex-ai-llm-shared-request-type' in channelHeaders(ch)

/** Searches held for a search tool that names no limit of its own. */
const DEFAULT_SEARCHES = 5

/**
 * Gemini's Google Search tools (`googleSearch`, REST's `google_search`, the older `googleSearchRetrieval`; the
 * Interactions API's `{type: 'google_search'}`): billed as web searches.
 */
const GEMINI_SEARCH_TOOLS = ['googleSearch', 'google_search', 'googleSearchRetrieval', 'google_search_retrieval']

/**
 * Web searches the request's tools may run, as billed per search: Anthropic's server tool `web_search_*` (its
 * `max_uses`), OpenAI Responses' `web_search*` tools (the request's `max_tool_calls`), Chat's `web_search_options`, Gemini's Google Search
 * grounding (no limit of its own: protocols/gemini/grounding.ts); each without a limit held at DEFAULT_SEARCHES. A
 * longer run is still charged, as far as the balance and the key's limit allow.
 */
function searchesAllowed(body: Record<string, unknown>): number {
	// Chat's `web_search_options` (no limit of its own): the search runs at whichever vendor serves the model.
	const chat = isObj(body.web_search_options) ? DEFAULT_SEARCHES : 0
	if (!Array.isArray(body.tools)) return chat
	let n = chat
	for (const t of body.tools) {
		if (isObj(t) && (GEMINI_SEARCH_TOOLS.some((k) => isObj(t[k])) || t.type === 'google_search')) {
			n += DEFAULT_SEARCHES
			continue
		}
		if (!isObj(t) || typeof t.type !== 'string' || !t.type.startsWith('web_search')) continue
		const limit = typeof t.max_uses === 'number' ? t.max_uses : typeof body.max_tool_calls === 'number' ? body.max_tool_calls : DEFAULT_SEARCHES
		n += Math.max(0, Math.min(Math.floor(limit), 100))
	}
	return n
}
