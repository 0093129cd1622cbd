/** POST /v1/chat/completions: OpenAI's chat-completions protocol, for every model. */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { keepRawJson, rawJson } from '../../http/raw-json'
import { OpenAIChatCompletion, OpenAIChatRequest, OpenAIErrorBody, includeUsageOf, openaiChat } from '../../protocols/openai-chat'
import type { HotRoute } from '../../http/hot-route'
import { relayRoute } from '../../relay/chat'
import { thinkingStore } from './kept-thinking'
import { openaiFileTerms } from '../batches/refs'
import type { Services } from '../../services'
import { keepingAnswer, storeTermsOf } from '../chat-stored/keep'
import { completionStore } from '../chat-stored/store'

/** The route's handler and what it checks, shared by its Elysia route and its hot route (src/http/hot-route.ts). */
export function chatRoute(svc: Services): HotRoute {
	const relay = relayRoute(svc, {
		endpoint: '/v1/chat/completions',
		shape: 'openai',
		client: openaiChat,
		schema: OpenAIChatRequest,
		includeUsage: includeUsageOf,
		// Claude's thinking, for clients that replay its tool calls without their reasoning_details.
		thinking: thinkingStore({ db: svc.db, log: svc.log }),
		// Only a body naming a file, vector store or container costs a lookup: each must be the account's (batches/refs.ts).
		files: (body, token, inbound) => openaiFileTerms(svc, body, token, inbound),
	})
	// `store: true` keeps the completion for the stored-completion routes (modules/chat-stored), for every model; any
	// other request is the relay's alone, its answer untouched.
	const store = completionStore(svc.db)
	return {
		...relay,
		serve(c) {
			// The one thing any other request pays for the feature: this read.
			if ((c.body as Record<string, unknown>).store !== true) return relay.serve(c)
			const terms = storeTermsOf(c.body as Record<string, unknown>, c.token.accountId)!
			terms.seq = store.nextSeq()
			// A stream showing its caller no usage is told the usage billed, for the copy (chat-stored/keep.ts).
			return relay.serve(c, terms.billed?.take).then((res) => keepingAnswer(store, svc.log, terms, res))
		},
	}
}

export const chatModule = (svc: Services, route = chatRoute(svc)) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/chat/completions',
		({ body, token, requestId, startedAt, request }) => route.serve({ body, raw: rawJson(request), token, requestId, startedAt, request }),
		{
			parse: keepRawJson,
			body: route.schema,
			response: { 200: OpenAIChatCompletion, 400: OpenAIErrorBody, 401: OpenAIErrorBody, 402: OpenAIErrorBody, 403: OpenAIErrorBody, 404: OpenAIErrorBody, 429: OpenAIErrorBody, 502: OpenAIErrorBody },
			detail: {
				summary: 'Create a chat completion',
				description: 'OpenAI chat-completions for any model. With `stream: true` the answer is `text/event-stream` of `chat.completion.chunk` objects ending in `data: [DONE]`. With `store: true` (and optional `metadata`, up to 16 string pairs) the gateway keeps the completed answer, for every model, for the stored-completion routes below (30 days); a failed or cut answer is not kept.',
			},
		},
	)
