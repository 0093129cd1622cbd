/**
 * `POST /v1/messages` with MCP servers through the Anthropic SDK's beta messages API (which sends the
 * `anthropic-beta` header), streamed or not, reduced to the message the SDK assembled plus the raw stream events.
 * @module
 */
import type Anthropic from '@anthropic-ai/sdk'
import { BETA, checkStream } from './setup'

export type Asked = {
	content: Array<{ type: string; [k: string]: unknown }>
	stop_reason: string | null
	usage: { input_tokens: number; output_tokens: number }
	/** Streams: the raw events in arrival order. */
	events?: Array<{ type: string; [k: string]: any }>
}

type Params = Record<string, unknown> & { model: string; messages: unknown[] }

/** One messages call; streams are checked for the protocol's invariants on the way. */
export async function ask(client: Anthropic, params: Params, stream: boolean, betas: string[] = [BETA]): Promise<Asked> {
	const body = { max_tokens: 1024, ...params, betas } as unknown as Anthropic.Beta.Messages.MessageCreateParamsNonStreaming
	if (!stream) {
		const m = await client.beta.messages.create(body)
		return { content: m.content as unknown as Asked['content'], stop_reason: m.stop_reason, usage: m.usage }
	}
	const s = client.beta.messages.stream(body)
	const events: NonNullable<Asked['events']> = []
	for await (const e of s) events.push(e as unknown as { type: string })
	const m = await s.finalMessage()
	checkStream(events)
	return { content: m.content as unknown as Asked['content'], stop_reason: m.stop_reason, usage: m.usage, events }
}
