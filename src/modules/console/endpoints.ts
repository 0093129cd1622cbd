/**
 * Which gateway endpoints and client protocols serve a model, derived from the types of the channels that carry it.
 * Chat channels speak every chat protocol (requests go through the canonical IR), so any chat model is reachable
 * through each; the OpenAI-style special families are told apart by the model's name, as vendors name them.
 * @module
 */
import type { ChannelType } from '../../providers/channel-types'
import type { Channel } from '../../routing/catalog'

export type Served = { endpoints: string[]; protocols: string[] }

const CHAT: Served = {
	endpoints: ['POST /v1/chat/completions', 'POST /v1/responses', 'POST /v1/messages', 'POST /v1beta/models/{model}:generateContent'],
	protocols: ['OpenAI Chat Completions', 'OpenAI Responses', 'Anthropic Messages', 'Gemini'],
}

const EMBED: Served = { endpoints: ['POST /v1/embeddings'], protocols: ['OpenAI Embeddings'] }

/** Gemini's embed methods also take the embedding models of these channel types (modules/gemini/embed.ts). */
const GEMINI_EMBED: Served = { endpoints: ['POST /v1beta/models/{model}:embedContent', 'POST /v1beta/models/{model}:batchEmbedContents'], protocols: ['Gemini Embeddings'] }
const GEMINI_EMBED_TYPES: ChannelType[] = ['gemini', 'vertex', 'openai', 'azure']

/** OpenAI-compatible families that are not chat, by the vendors' naming (text-embedding-3-small, tts-1, whisper-1 …). */
const RERANK: Served = { endpoints: ['POST /v1/rerank'], protocols: ['Rerank (Cohere/Jina)'] }

const FAMILIES: Array<[RegExp, Served]> = [
	// A reranker an OpenAI-compatible vendor serves (jina-reranker-*, bge-reranker-*), which /v1/rerank reaches too.
	[/rerank/i, RERANK],
	[/embed/i, EMBED],
	// Edits take dall-e-2 and the GPT image models, variations dall-e-2 alone (OpenAI's images reference).
	[/^dall-e-2/i, { endpoints: ['POST /v1/images/generations', 'POST /v1/images/edits', 'POST /v1/images/variations'], protocols: ['OpenAI Images'] }],
	[/^gpt-image/i, { endpoints: ['POST /v1/images/generations', 'POST /v1/images/edits'], protocols: ['OpenAI Images'] }],
	[/^(dall-e|imagen)/i, { endpoints: ['POST /v1/images/generations'], protocols: ['OpenAI Images'] }],
	[/(^|-)tts(-|$)/i, { endpoints: ['POST /v1/audio/speech'], protocols: ['OpenAI Audio'] }],
	// Translations (into English) are whisper-1's alone.
	[/whisper/i, { endpoints: ['POST /v1/audio/transcriptions', 'POST /v1/audio/translations'], protocols: ['OpenAI Audio'] }],
	[/transcribe/i, { endpoints: ['POST /v1/audio/transcriptions'], protocols: ['OpenAI Audio'] }],
	// The legacy completions models (gpt-3.5-turbo-instruct, davinci-002, babbage-002).
	[/instruct|^(davinci|babbage)/i, { endpoints: ['POST /v1/completions'], protocols: ['OpenAI Completions (legacy)'] }],
	[/moderation/i, { endpoints: ['POST /v1/moderations'], protocols: ['OpenAI Moderations'] }],
	// gpt-realtime*, gpt-4o(-mini)-realtime-preview*: the Realtime API over WebSocket (modules/realtime, OpenAI channels).
	[/realtime/i, { endpoints: ['GET /v1/realtime?model={model}'], protocols: ['OpenAI Realtime'] }],
]

/**
 * Gemini's media models: Imagen by its own `:predict` (modules/gemini/predict.ts) and by OpenAI's image generations,
 * which converts to it (modules/images/google.ts); Veo by `:predictLongRunning` only, since the OpenAI video routes
 * take other channel types; Gemini's image models by every chat protocol and by OpenAI's image generations.
 */
const GEMINI_FAMILIES: Array<[RegExp, Served]> = [
	[/^imagen/i, { endpoints: ['POST /v1beta/models/{model}:predict', 'POST /v1/images/generations'], protocols: ['Gemini Imagen', 'OpenAI Images'] }],
	[/^veo/i, { endpoints: ['POST /v1beta/models/{model}:predictLongRunning', 'GET /v1beta/models/{model}/operations/{id}'], protocols: ['Gemini Veo'] }],
	[/image/i, { endpoints: [...CHAT.endpoints, 'POST /v1/images/generations'], protocols: [...CHAT.protocols, 'OpenAI Images'] }],
]

const BY_TYPE: Partial<Record<ChannelType, Served>> = {
	rerank: RERANK,
	video: { endpoints: ['POST /v1/videos', 'POST /v1/video/generations'], protocols: ['Video tasks'] },
	imgsvc: { endpoints: ['POST /mj/submit/{action}'], protocols: ['Midjourney tasks'] },
	musicsvc: { endpoints: ['POST /suno/submit/{action}'], protocols: ['Suno tasks'] },
}

/** The family a channel type serves under `name`, when its type or the name says one (undefined: chat, the default). */
function family(name: string, type: ChannelType): Served | undefined {
	const s = BY_TYPE[type] ?? (type === 'gemini' ? GEMINI_FAMILIES.find(([re]) => re.test(name))?.[1] : undefined)
	return s ?? (type === 'anthropic' ? CHAT : FAMILIES.find(([re]) => re.test(name))?.[1])
}

/**
 * What one channel type serves of a model it carries under `name`; `alias`, the name clients use for it, says the
 * family when `name` says none (an Azure deployment may be called anything: `emb-prod` for text-embedding-3-small).
 */
function servedOne(name: string, type: ChannelType, alias?: string): Served[] {
	const s = family(name, type) ?? (alias === undefined ? undefined : family(alias, type)) ?? CHAT
	return s === EMBED && GEMINI_EMBED_TYPES.includes(type) ? [s, GEMINI_EMBED] : [s]
}

/** The union of what each channel serves (deduplicated, stable order). */
function union(all: Served[][]): Served {
	const endpoints = new Set<string>()
	const protocols = new Set<string>()
	for (const served of all)
		for (const s of served) {
			for (const e of s.endpoints) endpoints.add(e)
			for (const p of s.protocols) protocols.add(p)
		}
	return { endpoints: [...endpoints], protocols: [...protocols] }
}

/**
 * Endpoints and protocols for a model carried by channels of the given types (deduplicated, stable order).
 * @example servedBy('gpt-4o-mini', ['openai']).endpoints[0] === 'POST /v1/chat/completions'
 */
export function servedBy(model: string, types: ChannelType[]): Served {
	return union(types.map((type) => servedOne(model, type)))
}

/**
 * What reaches `model` through the channels that carry it, each channel's family told by the name it sends upstream
 * (model_map) when that name says one, else by `model`: an alias of text-embedding-3-small is an embedding model
 * whatever it is called here, and so is text-embedding-3-small sent to an Azure deployment named `emb-prod`.
 * @example servedThrough('house-vectors', [{ type: 'openai', modelMap: { 'house-vectors': 'text-embedding-3-small' } }]).endpoints[0] === 'POST /v1/embeddings'
 */
export function servedThrough(model: string, channels: ReadonlyArray<Pick<Channel, 'type' | 'modelMap'>>): Served {
	return union(channels.map((ch) => servedOne(ch.modelMap[model] ?? model, ch.type, model)))
}
