/** POST /v1/messages: Anthropic's messages protocol, for every model. */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { keepRawJson, rawJson } from '../../http/raw-json'
import { AnthropicErrorBody, AnthropicRequest, AnthropicResponse, anthropicMessages } from '../../protocols/anthropic-messages'
import { withRequestId } from '../../protocols/anthropic-messages/error'
import type { HotRoute } from '../../http/hot-route'
import { relayRoute } from '../../relay/chat'
import type { Services } from '../../services'
import { outputTerms } from '../anthropic-files/outputs'
import { fileTerms } from '../anthropic-files/refs'
import { threadTerms } from './threads'

/** The route's handler and what it checks, shared by its Elysia route and its hot route (src/http/hot-route.ts). */
export const messagesRoute = (svc: Services): HotRoute => {
	const route = relayRoute(svc, {
		endpoint: '/v1/messages',
		shape: 'anthropic',
		client: anthropicMessages,
		schema: AnthropicRequest,
		includeUsage: () => false,
		// Only a body naming a thread costs a lookup (threads.ts).
		thread: (body, token) => (body.thread === undefined ? undefined : threadTerms(svc, token.accountId, body)),
		// Only a body naming an uploaded file costs a lookup (anthropic-files/refs.ts).
		files: (body, token, inbound) => fileTerms(svc, body, token, inbound),
		// Only a body offering Claude's code execution tool gets its answer read for the files the code wrote (anthropic-files/outputs.ts).
		outputs: (body, token, requestId) => outputTerms(svc, body, token, requestId),
	})
	// Anthropic's SDK reads the request's id from `request-id` (error answers get it in errorResponse).
	return { ...route, serve: async (c) => withRequestId(await route.serve(c), c.requestId) }
}

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
