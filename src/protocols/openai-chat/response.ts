/**
 * `chat.completion` bodies ⇄ canonical response (https://platform.openai.com/docs/api-reference/chat/object).
 * @module
 */
import { GatewayError, upstreamRateLimited } from '../../core/errors'
import type { ChatResponse, TextPart, ToolCallPart, Usage } from '../../core/ir'
import { emptyUsage } from '../../core/ir'
import { packToolCallId, unpackToolCallId } from '../../core/tool-ids'
import type { EncodeContext } from '../codec'
import { newId } from '../../lib/ids'
import { decodeReasoning, encodeReasoning, parseArguments } from './content'
import { count, isObject, str } from './guards'
import { decodeLogprobs, encodeLogprobs } from './logprobs'
import { decodeAnnotations, encodeAnnotations } from './web-search'
import { encodeMcpCalls, type McpCall } from './mcp'
import type { OpenAIChatCompletion } from './model'
import { decodeFinishReason, decodeUsage, encodeFinishReason, encodeUsage, tierField, withToolUse } from './usage'

/**
 * The upstream's error object as a GatewayError (a 200 body can still carry `{error}` on some compatibles; a stream an
 * `error` chunk). A rate limit (`code: "rate_limit_exceeded"`, or a compatible's `type: "rate_limit_error"`) is the
 * gateway's own, as at the HTTP level: OpenAI's text names the gateway's organization.
 */
export function upstreamError(error: unknown): GatewayError {
	const e = isObject(error) ? error : {}
	const code = str(e.code) ?? (typeof e.code === 'number' ? String(e.code) : undefined)
	const message = str(e.message) ?? 'upstream error'
	if (code === 'rate_limit_exceeded' || e.type === 'rate_limit_error') return upstreamRateLimited(message)
	return new GatewayError('upstream', message, { code, retryable: true })
}

/** Text of `message.content`: a string, or text parts on some compatibles. */
function contentText(content: unknown): string {
	if (typeof content === 'string') return content
	if (!Array.isArray(content)) return ''
	return content.map((p) => (isObject(p) && p.type === 'text' ? (str(p.text) ?? '') : '')).join('')
}

/**
 * Upstream `chat.completion` → canonical response: the choice whose `index` is `choice` (`n` > 1 gives several).
 * Throws GatewayError('upstream') on an error or malformed body.
 */
export function decodeResponse(body: unknown, choice = 0): ChatResponse {
	if (!isObject(body)) throw new GatewayError('upstream', 'upstream returned a malformed chat completion', { retryable: true })
	if (body.error) throw upstreamError(body.error)
	const choices = Array.isArray(body.choices) ? body.choices.filter(isObject) : []
	const found = choices.find((c) => c.index === choice) ?? choices[choice]
	// An OpenAI-compatible server that ignores `n` answers one choice: the others are missing, not empty.
	if (!found && choice > 0) throw new GatewayError('upstream', `upstream sent no choice ${choice} (does it support n?)`, { retryable: true, code: 'upstream_malformed' })
	const picked = found ?? {}
	// Mistral's `error` finish reason (API ref FinishReason): generation failed; the partial message is not an answer.
	if (picked.finish_reason === 'error') throw new GatewayError('upstream', 'upstream ended the answer with finish_reason "error"', { retryable: true })
	const message = isObject(picked.message) ? picked.message : {}
	const content: ChatResponse['content'] = decodeReasoning(message.reasoning_content ?? message.reasoning, message.reasoning_details)
	const text = contentText(message.content)
	const citations = decodeAnnotations(message.annotations, text)
	if (text) content.push(citations.length ? { type: 'text', text, citations } : { type: 'text', text })
	const refusal = str(message.refusal)
	if (refusal) content.push({ type: 'text', text: refusal })
	const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : []
	for (const call of calls) {
		const fn = isObject(call.function) ? call.function : {}
		const { id, signature } = unpackToolCallId(str(call.id) || newId('call_'))
		const part: ToolCallPart = { type: 'tool_call', id, name: str(fn.name) ?? '', input: parseArguments(fn.arguments) }
		if (signature) part.signature = signature
		content.push(part)
	}
	const reason = withToolUse(decodeFinishReason(picked.finish_reason), calls.length > 0)
	const res: ChatResponse = {
		id: str(body.id) || newId('chatcmpl'),
		model: str(body.model) ?? '',
		content,
		stopReason: refusal && reason === 'end_turn' ? 'refusal' : reason,
		usage: decodeUsage(body.usage, body.service_tier) ?? emptyUsage(),
	}
	// Its words are also the answer's text, for clients that have no refusal field; a Responses client gets them as its `refusal` part.
	if (refusal) res.refusal = refusal
	const logprobs = decodeLogprobs(picked.logprobs)
	if (logprobs) res.logprobs = logprobs
	const created = count(body.created)
	if (created) res.created = created
	return res
}

/** Keeps the upstream id when it already looks like OpenAI's; other vendors' ids (msg_…) get a fresh one. */
export const completionId = (id: string | undefined): string => (id?.startsWith('chatcmpl-') ? id : newId('chatcmpl'))

/**
 * Canonical response → client `chat.completion`, with `model` set to the name the client asked for. MCP calls the
 * gateway ran go to the `message.mcp_calls` extension (mcp.ts).
 */
export function encodeResponse(res: ChatResponse, ctx: EncodeContext): OpenAIChatCompletion {
	const texts = res.content.filter((p): p is TextPart => p.type === 'text')
	const text = texts.map((p) => p.text).join('')
	// The search ran at the vendor: its citations are the message's `url_citation` annotations (chat has no search item).
	const annotations = encodeAnnotations(texts)
	const calls = res.content
		.filter((p): p is ToolCallPart => p.type === 'tool_call')
		.map((c) => ({
			id: packToolCallId(c.id, c.signature),
			type: 'function' as const,
			function: { name: c.name, arguments: JSON.stringify(c.input) },
		}))
	const message: OpenAIChatCompletion['choices'][number]['message'] & { mcp_calls?: McpCall[] } = {
		role: 'assistant',
		content: text || (calls.length ? null : ''),
		refusal: null,
		...encodeReasoning(res.content),
	}
	if (calls.length) message.tool_calls = calls
	if (annotations.length) Object.assign(message, { annotations })
	const mcpCalls = encodeMcpCalls(res.content)
	if (mcpCalls.length) message.mcp_calls = mcpCalls
	return {
		id: completionId(res.id),
		object: 'chat.completion',
		created: res.created ?? Math.floor(Date.now() / 1000),
		model: ctx.model,
		choices: [{ index: ctx.choice ?? 0, message, logprobs: encodeLogprobs(res.logprobs), finish_reason: encodeFinishReason(res.stopReason, calls.length > 0) }],
		usage: encodeUsage(res.usage),
		...tierField(res.usage),
	}
}

/**
 * Usage of an upstream `chat.completion` body or chunk without a full decode (fast-path billing). Groq streams carry
 * it in `x_groq.usage` instead (vercel/ai#1651).
 */
export const usageOf = (body: unknown): Usage | undefined =>
	isObject(body) ? (decodeUsage(body.usage, body.service_tier) ?? (isObject(body.x_groq) ? decodeUsage(body.x_groq.usage) : undefined)) : undefined
