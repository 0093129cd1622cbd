/** POST /v1/messages: Anthropic's messages protocol, for every model. */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { keepRawJson, rawJson } from '../../http/raw-json'
import { AnthropicErrorBody, AnthropicRequest, AnthropicResponse, anthropicMessages } from '../../protocols/anthropic-messages'
import { relayChat } from '../../relay/chat'
import type { Services } from '../../services'

export const messagesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Anthropic'] } }).use(modelAuth(svc)).post(
		'/v1/messages',
		({ body, token, requestId, startedAt, request }) =>
			relayChat({
				svc,
				token,
				requestId,
				startedAt,
				endpoint: '/v1/messages',
				shape: 'anthropic',
				client: anthropicMessages,
				body: body as Record<string, unknown>,
				raw: rawJson(request),
				ir: anthropicMessages.decodeRequest(body),
				includeUsage: false,
				inbound: request.headers,
				signal: request.signal,
			}),
		{
			parse: keepRawJson,
			body: AnthropicRequest,
			response: { 200: AnthropicResponse, 400: AnthropicErrorBody, 401: AnthropicErrorBody, 402: AnthropicErrorBody, 403: AnthropicErrorBody, 404: AnthropicErrorBody, 429: AnthropicErrorBody, 529: AnthropicErrorBody },
			detail: {
				summary: 'Create a message',
				description: 'Anthropic messages for any model. With `stream: true` the answer is `text/event-stream` with `event:` lines (message_start … message_stop).',
			},
		},
	)
