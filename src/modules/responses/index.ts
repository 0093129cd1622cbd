/**
 * POST /v1/responses: OpenAI's Responses API, for every model (verbatim to OpenAI channels, converted for others);
 * and the routes on a stored response (stored-routes.ts), input token counting (input-tokens.ts) and compaction (compact.ts).
 */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { ResponsesRequest, ResponsesResponse, openaiResponses } from '../../protocols/openai-responses'
import { relayChat } from '../../relay/chat'
import type { Services } from '../../services'
import { mayReachOpenAI, reachesOpenAI, refuseUnconvertible, responsesNative } from './native'
import { convertedItems, rememberingCodec } from './converted-items'
import { echoingCodec, echoOf } from './echo'
import { customCallsCodec } from './custom-calls'
import { namespacedCallsCodec } from './namespaced-calls'
import { toolSearchCallsCodec } from './tool-search-calls'
import { typedCallsCodec } from './typed-calls'
import { offeredTools } from '../../protocols/openai-responses/tool-search'
import { holderOf, refuseUnheldReasoning } from './ownership'
import { expandPrevious, keptInput } from './previous'
import { keptFirst } from './kept-first'
import { type BackgroundPoller, startBackgroundPoller } from './background'
import { inputTokensRoute } from './input-tokens'
import { compactRoute } from './compact'
import { storedResponseRoutes } from './stored-routes'
import { conversationTurn } from '../conversations/turn'
import { openaiFileTerms } from '../batches/refs'
import { checkMetadata } from '../chat-stored/store'

export const responsesModule = (svc: Services) => {
	// Items of converted answers, for clients that name them by `item_reference` next turn (converted-items.ts).
	const items = convertedItems({ store: { db: svc.db, log: svc.log, bus: svc.bus } })
	// Background responses nobody retrieves are settled by polling OpenAI while the server listens (background.ts).
	let poller: BackgroundPoller | undefined
	return new Elysia({ detail: { tags: ['OpenAI'] } })
		.onStart(() => {
			poller ??= startBackgroundPoller(svc)
		})
		.onStop(async () => {
			await poller?.stop()
			poller = undefined
		})
		.use(storedResponseRoutes(svc, items))
		.use(inputTokensRoute(svc, items))
		.use(compactRoute(svc, items))
		.use(modelAuth(svc))
		.post(
		'/v1/responses',
		async ({ body, token, requestId, startedAt, request }) => {
			const wire = { ...(body as Record<string, unknown>) }
			// OpenAI's limits on metadata keys, which the body's schema cannot state (its pairs and values it does).
			checkMetadata(wire.metadata)
			// A conversation of this gateway's becomes plain input, for every channel; the turn is appended once completed.
			const turn = await conversationTurn(svc, token.accountId, wire)
			// The conversation is held for the turn: let go of on any way out before the answer takes it over.
			if (turn) request.signal.addEventListener('abort', () => void turn.release(), { once: true })
			try {
				const resolved = items.resolve(token.accountId, wire.input, !mayReachOpenAI(svc, token, wire.model))
				const input = resolved instanceof Promise ? await resolved : resolved
				if (input) wire.input = input
				// A converted response named by `previous_response_id` becomes plain input (previous.ts); any other id not the account's is 400.
				const expanded = await expandPrevious(svc, items, token.accountId, wire)
				const ir = openaiResponses.decodeRequest(wire)
				refuseUnconvertible(svc, token, wire, ir.model)
				// Reasoning named by an id the gateway could not put back would go to another vendor as nothing (ownership.ts).
				if (!reachesOpenAI(svc, token, ir.model)) await refuseUnheldReasoning(svc, token.accountId, wire)
				// Only the account a stored response (or item) was answered to may continue it or name it (400 / 404 otherwise), on
				// the channel holding it.
				const holder = await holderOf(svc, token.accountId, wire, reachesOpenAI(svc, token, ir.model))
				const holds = holder !== undefined && svc.catalog.channelsFor(ir.model).some((ch) => ch.id === holder)
				// Files named must be the account's (404 otherwise), and go to the channel holding them (batches/refs.ts).
				const files = await openaiFileTerms(svc, wire, token, request.headers)
				// A converted answer echoes the request's settings; OpenAI keeps a response for later reference unless
				// `store: false`, and so does this gateway for a converted one (converted-items.ts).
				// A turn of a conversation names it, as OpenAI's Response object does (`conversation: {id}`).
				// A continuation names the response it continued, as OpenAI's Response object does, though it went upstream as plain input.
				const echo = { ...echoOf(wire), ...(turn && { conversation: { id: turn.id } }), ...(expanded && { previous_response_id: expanded.previous }) }
				// Calls of the tools a replayed client-run search loaded come back as those of the request's own (tool-search.ts).
				const offered = offeredTools(wire.tools, wire.input)
				const client = typedCallsCodec(toolSearchCallsCodec(customCallsCodec(namespacedCallsCodec(echoingCodec(openaiResponses, echo), offered), offered), wire.tools), wire.tools)
				// The writes of what a converted answer keeps, and (once its Response object is encoded) all of them: the end
				// of the answer waits for them (kept-first.ts).
				const writes: Promise<void>[] = []
				let kept: Promise<void> | undefined
				const res = await relayChat({
					svc,
					token,
					requestId,
					startedAt,
					endpoint: '/v1/responses',
					shape: 'openai',
					client:
						wire.store === false
							? client
							: rememberingCodec(
									client,
									(out) => void writes.push(items.remember(token.accountId, out)),
									(response) => {
										writes.push(items.keepResponse(token.accountId, response, turn?.input ?? keptInput(wire, expanded), expanded?.previous))
										kept = Promise.all(writes).then(() => undefined)
									},
								),
					body: wire,
					ir,
					includeUsage: false,
					inbound: request.headers,
					signal: request.signal,
					...(files && { files }),
					native: responsesNative({ body: wire, ir, inbound: request.headers, signal: request.signal, holder: holds ? holder : undefined, conversation: turn?.id }),
				})
				const out = wire.store === false ? res : await keptFirst(res, () => kept)
				return turn ? await turn.record(out) : out
			} catch (e) {
				await turn?.release()
				throw e
			}
		},
		{
			body: ResponsesRequest,
			response: { 200: ResponsesResponse, 400: OpenAIErrorBody, 401: OpenAIErrorBody, 402: OpenAIErrorBody, 403: OpenAIErrorBody, 404: OpenAIErrorBody, 429: OpenAIErrorBody, 502: OpenAIErrorBody },
			detail: {
				summary: 'Create a model response',
				description:
					'OpenAI Responses API for any model. OpenAI channels receive the request verbatim (stored responses, built-in tools and `previous_response_id` work there); other models are converted (text, images, files given as `file_data` or `file_url`, function tools, the client-run `shell`, `apply_patch` and `local_shell` tools as functions whose calls come back as their typed items, reasoning) and answer 400 for features that need OpenAI (`previous_response_id` of a response made on an OpenAI channel, built-in tools, files by `file_id`). A `previous_response_id` naming a converted answer (a model of another vendor, not sent with `store: false`) works for every model: its whole input and its output go before `input`, sent upstream as plain input (the previous `instructions` are not carried over, as on OpenAI). `conversation` names a conversation of the Conversations API (`/v1/conversations`), which this gateway keeps for every model: its items go before `input`, and the input and output items are appended when the response completes (not with `background`). A `previous_response_id` that does not belong to the calling account (or of a `store: false` answer) is 400 `previous_response_not_found`, as OpenAI answers an unknown one, and such a `conversation` 404; both together are 400. With `stream: true` the answer is `text/event-stream` of named events (`response.created` … `response.completed`) with `sequence_number`.',
			},
		},
	)
}
