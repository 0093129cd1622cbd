/** POST /v1/messages: Anthropic's messages protocol, for every model. */
import { Elysia, type Static } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { keepRawJson, rawJson } from '../../http/raw-json'
import { AnthropicErrorBody, AnthropicRequest, AnthropicResponse, anthropicMessages } from '../../protocols/anthropic-messages'
import type { HotRoute } from '../../http/hot-route'
import { relayChat } from '../../relay/chat'
import type { Services } from '../../services'

/** The route's handler and what it checks, shared by its Elysia route and its hot route (src/http/hot-route.ts). */
export const messagesRoute = (svc: Services): HotRoute => ({
	schema: AnthropicRequest,
	shape: 'anthropic',
	serve: ({ body, raw, token, requestId, startedAt, request }) =>
		relayChat({
			svc,
			token,
			requestId,
			startedAt,
			endpoint: '/v1/messages',
			shape: 'anthropic',
			client: anthropicMessages,
			body: body as Record<string, unknown>,
			raw,
			ir: anthropicMessages.decodeRequest(body as Static<typeof AnthropicRequest>),
			includeUsage: false,
			inbound: request.headers,
			signal: request.signal,
		}),
})

export const messagesModule = (svc: Services, route = messagesRoute(svc)) =>
	new Elysia({ detail: { tags: ['Anthropic'] } }).use(modelAuth(svc)).post(
		'/v1/messages',
		({ body, token, requestId, startedAt, request }) => route.serve({ body, raw: rawJson(request), token, requestId, startedAt, request }),
		{
			parse: keepRawJson,
			body: route.schema,
			response: { 200: AnthropicResponse, 400: AnthropicErrorBody, 401: AnthropicErrorBody, 402: AnthropicErrorBody, 403: AnthropicErrorBody, 404: AnthropicErrorBody, 429: AnthropicErrorBody, 529: AnthropicErrorBody },
			detail: {
				summary: 'Create a message',
				description: 'Anthropic messages for any model. With `stream: true` the answer is `text/event-stream` with `event:` lines (message_start … message_stop).',
			},
		},
	)
