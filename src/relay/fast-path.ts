/**
 * Same protocol on both sides: the client's body goes upstream as it came, with only the model name, the output
 * cap (when the budget or the model's maximum lowered it) and, for OpenAI streams, `stream_options.include_usage`
 * (we bill from it) changed. Unknown fields pass through untouched.
 * @module
 */
import type { ProtocolName } from '../protocols/codec'

type Body = Record<string, unknown>

export function rewriteBody(protocol: ProtocolName, body: Body, upstreamModel: string, cap: number | undefined, stream: boolean): Body {
	const out: Body = { ...body }
	switch (protocol) {
		case 'openai-chat':
			out.model = upstreamModel
			if (stream) out.stream_options = { ...(body.stream_options as Body | undefined), include_usage: true }
			if (cap !== undefined) {
				if (body.max_completion_tokens !== undefined) out.max_completion_tokens = cap
				else out.max_tokens = cap
			}
			break
		case 'anthropic-messages':
			out.model = upstreamModel
			if (cap !== undefined) out.max_tokens = cap
			break
		case 'gemini':
			// The model is in the URL; nothing in the body names it.
			delete out.model
			if (cap !== undefined) out.generationConfig = { ...(body.generationConfig as Body | undefined), maxOutputTokens: cap }
			break
	}
	return out
}

/**
 * OpenAI streams: the client did not ask for usage, but we did. Drop the usage-only chunk and the `"usage":null`
 * the others then carry, so the client sees the stream it asked for (WIRE-NOTES §12).
 * @returns the frame data to send, or undefined to drop the frame
 */
export function stripUsage(data: string): string | undefined {
	if (data.includes('"choices":[]') && data.includes('"usage":{')) return undefined
	return data.includes('"usage":null') ? data.replace(/,"usage":null|"usage":null,?/, '') : data
}
