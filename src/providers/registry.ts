/** Channel type → chat adapter. Types without chat (rerank, video, imgsvc, musicsvc) have none. */
import type { ChatAdapter } from './adapter'
import { anthropicAdapter } from './anthropic'
import { azureAdapter } from './azure'
import type { ChannelType } from './channel-types'
import { geminiAdapter } from './gemini'
import { openaiAdapter } from './openai'

const CHAT: Partial<Record<ChannelType, ChatAdapter>> = {
	openai: openaiAdapter,
	anthropic: anthropicAdapter,
	gemini: geminiAdapter,
	azure: azureAdapter,
}

export const chatAdapterFor = (type: ChannelType): ChatAdapter | undefined => CHAT[type]
