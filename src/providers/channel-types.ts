/** Channel types the gateway knows. Chat-capable types each have a vendor adapter in providers/. */
export const CHANNEL_TYPES = ['openai', 'anthropic', 'gemini', 'azure', 'bedrock', 'vertex', 'rerank', 'video', 'imgsvc', 'musicsvc'] as const
export type ChannelType = (typeof CHANNEL_TYPES)[number]

export const isChannelType = (s: string): s is ChannelType => (CHANNEL_TYPES as readonly string[]).includes(s)
