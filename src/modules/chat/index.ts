/** POST /v1/chat/completions: OpenAI's chat-completions protocol, for every model. */
import { Elysia, t } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { keepRawJson, rawJson } from '../../http/raw-json'
import { OpenAIChatCompletion, OpenAIChatRequest, OpenAIErrorBody, includeUsageOf, openaiChat } from '../../protocols/openai-chat'
import { relayChat } from '../../relay/chat'
import type { Services } from '../../services'

export const chatModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/chat/completions',
		({ body, token, requestId, startedAt, request }) =>
			relayChat({
				svc,
				token,
				requestId,
				startedAt,
				endpoint: '/v1/chat/completions',
				shape: 'openai',
				client: openaiChat,
				body: body as Record<string, unknown>,
				raw: rawJson(request),
				ir: openaiChat.decodeRequest(body),
				includeUsage: includeUsageOf(body),
				inbound: request.headers,
				signal: request.signal,
			}),
		{
			parse: keepRawJson,
			body: OpenAIChatRequest,
			response: { 200: OpenAIChatCompletion, 400: OpenAIErrorBody, 401: OpenAIErrorBody, 402: OpenAIErrorBody, 403: OpenAIErrorBody, 404: OpenAIErrorBody, 429: OpenAIErrorBody, 502: OpenAIErrorBody },
			detail: {
				summary: 'Create a chat completion',
				description: 'OpenAI chat-completions for any model. With `stream: true` the answer is `text/event-stream` of `chat.completion.chunk` objects ending in `data: [DONE]`.',
			},
		},
	)
