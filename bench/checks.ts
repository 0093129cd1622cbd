/**
 * Response checks applied to every benchmark response: a fast target that answers wrongly must not look fast.
 * Cheap string tests on purpose, so the load generator stays light.
 * @module
 */
import type { Expect } from './types'

/**
 * The usage field every good body of that kind carries; wrk's Lua script tests the same marker.
 * OpenAI puts `completion_tokens` in `usage` (streams: the extra chunk sent with `stream_options.include_usage`);
 * Anthropic puts `output_tokens` in the response (streams: in `message_delta`).
 */
export const USAGE_MARKER: Record<Expect, string> = {
	'chat-json': '"completion_tokens"',
	'chat-sse': '"completion_tokens"',
	// Not asked for, so none may come (the gateway asks upstream for it, to bill, and strips it).
	'chat-sse-plain': '',
	'messages-json': '"output_tokens"',
	'messages-sse': '"output_tokens"',
}

// A chat stream ends with `data: [DONE]`; a messages stream with the message_stop event (its data may vary).
const CHAT_END = /data: \[DONE\]\s*$/
const MESSAGES_END = /event: message_stop\r?\ndata: [^\n]*\s*$/

/**
 * Returns why a response is bad, or undefined when it is good.
 * @example checkResponse('chat-sse', 200, body) // undefined | 'no [DONE] at the end'
 */
export function checkResponse(expect: Expect, status: number, body: string): string | undefined {
	if (status !== 200) return `status ${status}`
	if (expect === 'chat-sse-plain') {
		if (body.includes('"usage"')) return 'usage the client did not ask for'
		return CHAT_END.test(body) ? undefined : 'no [DONE] at the end'
	}
	if (!body.includes(USAGE_MARKER[expect])) return 'no usage'
	if (expect === 'chat-sse' && !CHAT_END.test(body)) return 'no [DONE] at the end'
	if (expect === 'messages-sse' && !MESSAGES_END.test(body)) return 'no message_stop at the end'
	if (expect === 'chat-json' || expect === 'messages-json') {
		try {
			JSON.parse(body)
		} catch {
			return 'body is not JSON'
		}
	}
	return undefined
}
