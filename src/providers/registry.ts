/** Channel type → chat adapter. Types without chat (rerank, video, imgsvc, musicsvc) have none. */
import type { Logger } from '../lib/log'
import type { Channel } from '../routing/catalog'
import type { ChatAdapter } from './adapter'
import { anthropicAdapter } from './anthropic'
import { azureAdapter } from './azure'
import { bedrockAdapter } from './bedrock'
import { profilesLearnt } from './bedrock-profiles'
import type { ChannelType } from './channel-types'
import { geminiAdapter } from './gemini'
import { openaiAdapter } from './openai'
import { vertexAdapter } from './vertex'

const CHAT: Partial<Record<ChannelType, ChatAdapter>> = {
	openai: openaiAdapter,
	anthropic: anthropicAdapter,
	gemini: geminiAdapter,
	azure: azureAdapter,
	bedrock: bedrockAdapter,
	vertex: vertexAdapter,
}

export const chatAdapterFor = (type: ChannelType): ChatAdapter | undefined => CHAT[type]

/**
 * The adapter a request for the public `model` goes through on `ch`: the type's, or for a vendor with a protocol per
 * model (Vertex AI, Bedrock) the one of the model `model_map` sends upstream. Without a model, the type's own.
 * @example chatAdapterOf(vertexChannel, 'gemini-2.5-flash').protocol === gemini
 */
export function chatAdapterOf(ch: Channel, model?: string): ChatAdapter | undefined {
	const a = CHAT[ch.type]
	return a?.forModel && model !== undefined ? a.forModel(ch.modelMap[model] ?? model, ch) : a
}

/**
 * What the adapters of the public `model` on `channels` wait on before they are asked (`chatAdapterOf`): a Bedrock
 * application inference profile's model, learnt once per channel (bedrock-profiles.ts). Undefined, with nothing made,
 * when nothing is to be learnt, as for nearly every request; the promise never rejects and is bounded.
 */
export const adaptersReady = (channels: Channel[], model: string, log: Logger): Promise<void> | undefined => profilesLearnt(channels, model, log)
