/**
 * POST /v1/responses/input_tokens: the input token count of a Responses request, for every model, never billed
 * (https://platform.openai.com/docs/api-reference/responses/input-tokens; the answer is
 * `{object: 'response.input_tokens', input_tokens}`). A model whose first channel is an OpenAI one is counted there
 * (the body as sent, `model` renamed); any other is decoded as `POST /v1/responses` decodes it and counted as
 * `/v1/messages/count_tokens` counts (by Anthropic or Gemini, else estimated locally: count-tokens/counter.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { Integer } from '../../protocols/json-types'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { ResponsesRequest, openaiResponses } from '../../protocols/openai-responses'
import { chatAdapterFor } from '../../providers/registry'
import { upstreamError } from '../../providers/upstream-error'
import { resolveModel } from '../../relay/budget'
import { credentialHooks } from '../../passthrough/upstream'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import { orderChannels } from '../../routing/select'
import type { Services } from '../../services'
import { countTokens } from '../count-tokens/counter'
import type { ConvertedItems } from './converted-items'
import { reachesOpenAI, refuseUnconvertible, responsesUrlOf } from './native'
import { holderOf } from './ownership'
import { expandPrevious } from './previous'
import { expandConversation } from '../conversations/turn'
import { openaiFileTerms } from '../batches/refs'
import { appendPath } from '../../providers/append-path'

export const InputTokensResponse = t.Object({ object: t.Literal('response.input_tokens'), input_tokens: Integer() })

/** OpenAI's own count, from the channel's `/responses/input_tokens`. */
async function byOpenAI(ch: Channel, url: string, wire: Record<string, unknown>, model: string, inbound: Headers, signal: AbortSignal): Promise<number> {
	const body = { ...wire, model: ch.modelMap[model] ?? model }
	const { res } = await fetchUpstream(
		appendPath(url, '/input_tokens'),
		{ headers: chatAdapterFor(ch.type)!.headers(ch, inbound), body: JSON.stringify(body), ...credentialHooks(ch) },
		channelTimeouts(ch.settings),
		signal,
	)
	const text = await res.text()
	if (!res.ok) throw upstreamError(res.status, text, res.headers)
	let out: { input_tokens?: unknown }
	try {
		out = JSON.parse(text) as { input_tokens?: unknown }
	} catch {
		out = {}
	}
	if (typeof out.input_tokens !== 'number') throw new GatewayError('upstream', 'upstream count has no input_tokens', { code: 'upstream_malformed' })
	return out.input_tokens
}

export const inputTokensRoute = (svc: Services, items: ConvertedItems) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/responses/input_tokens',
		async ({ body, token, requestId, request }) => {
			const wire = { ...(body as Record<string, unknown>) }
			const model = body.model
			// A conversation of this gateway's is counted as the input it becomes (conversations/turn.ts).
			await expandConversation(svc, token.accountId, wire)
			const input = await items.resolve(token.accountId, wire.input)
			if (input) wire.input = input
			// A converted response it continues is counted as the input it becomes (previous.ts).
			await expandPrevious(svc, items, token.accountId, wire)
			const { channels } = resolveModel(svc, token, model)
			// As for the POST: a continuation only of the caller's own response (items too), counted by the channel that holds it.
			const holder = await holderOf(svc, token.accountId, wire, reachesOpenAI(svc, token, model))
			// Files named must be the caller's, counted by the channel holding them (batches/refs.ts).
			const files = await openaiFileTerms(svc, wire, token, request.headers)
			const pin = files?.channelId ?? holder
			const first = channels.find((ch) => ch.id === pin) ?? orderChannels(channels)[0]!
			if (files && first.id !== files.channelId) throw files.unreadable(model)
			const url = responsesUrlOf(first, chatAdapterFor(first.type))
			let tokens: number
			if (url) tokens = await byOpenAI(first, url, wire, model, request.headers, request.signal)
			else {
				refuseUnconvertible(svc, token, wire, model)
				const ir = openaiResponses.decodeRequest(wire)
				// MCP servers it names count with the tools the gateway would offer the model for them (count-tokens/counter.ts).
				const mcp = { client: 'openai-responses' as const, body: wire, beta: request.headers.get('anthropic-beta') }
				tokens = (await countTokens({ svc, token, requestId, model, ir, inbound: request.headers, signal: request.signal, mcp })).tokens
			}
			return Response.json({ object: 'response.input_tokens', input_tokens: tokens }, { headers: { 'x-request-id': requestId } })
		},
		{
			body: ResponsesRequest,
			response: {
				200: InputTokensResponse,
				400: OpenAIErrorBody,
				401: OpenAIErrorBody,
				403: OpenAIErrorBody,
				404: OpenAIErrorBody,
				429: OpenAIErrorBody,
				502: OpenAIErrorBody,
			},
			detail: {
				summary: 'Count the input tokens of a Responses request',
				description:
					'For any model: counted by OpenAI on OpenAI channels, otherwise as `/v1/messages/count_tokens` counts (by Anthropic or Gemini, else estimated). Not billed. `model` is required (it picks the channel).',
			},
		},
	)
