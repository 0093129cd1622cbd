/**
 * POST /v1/responses/compact: OpenAI's compaction of a long conversation (`client.responses.compact`, which the
 * Agents SDK's `OpenAIResponsesCompactionSession` calls; https://platform.openai.com/docs/api-reference/responses/compact).
 * The body goes verbatim to the model's OpenAI channel (`{base_url}/responses/compact`, `model` renamed by
 * `model_map`) and is billed from the answer's `usage` like a response; the answer's `compaction` item is encrypted for
 * OpenAI alone, so for other vendors' models it is a 400 before any upstream call or charge (native.ts `COMPACT_REFUSAL`).
 * As for `POST /v1/responses`, a `previous_response_id` must be the caller's and goes to the channel holding it.
 * @module
 */
import { Elysia, t } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { Integer } from '../../protocols/json-types'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { ResponsesRequest, ResponsesUsage, openaiResponses } from '../../protocols/openai-responses'
import { relayChat } from '../../relay/chat'
import type { Services } from '../../services'
import type { ConvertedItems } from './converted-items'
import { COMPACT_REFUSAL, refuseUnconvertible, responsesNative } from './native'
import { holderOf } from './ownership'
import { openaiFileTerms } from '../batches/refs'

export const CompactedResponse = t.Object(
	{
		id: t.String(),
		object: t.Literal('response.compaction'),
		created_at: Integer(),
		output: t.Array(t.Record(t.String(), t.Unknown())),
		usage: ResponsesUsage,
	},
	{ additionalProperties: true },
)

export const compactRoute = (svc: Services, items: ConvertedItems) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/responses/compact',
		async ({ body, token, requestId, startedAt, request }) => {
			const wire = { ...(body as Record<string, unknown>) }
			// Only OpenAI's models compact, and OpenAI holds their reasoning by id.
			const resolved = items.resolve(token.accountId, wire.input, false)
			const input = resolved instanceof Promise ? await resolved : resolved
			if (input) wire.input = input
			const ir = openaiResponses.decodeRequest(wire)
			// The answer is one JSON object: compaction has no stream.
			ir.stream = false
			refuseUnconvertible(svc, token, wire, ir.model, COMPACT_REFUSAL)
			// Only an OpenAI channel compacts (refused just above otherwise): it looks the items up.
			const holder = await holderOf(svc, token.accountId, wire, true)
			const holds = holder !== undefined && svc.catalog.channelsFor(ir.model).some((ch) => ch.id === holder)
			// Files named must be the caller's, and go to the channel holding them (batches/refs.ts).
			const files = await openaiFileTerms(svc, wire, token, request.headers)
			return relayChat({
				...(files && { files }),
				svc,
				token,
				requestId,
				startedAt,
				endpoint: '/v1/responses/compact',
				shape: 'openai',
				client: openaiResponses,
				body: wire,
				ir,
				includeUsage: false,
				inbound: request.headers,
				signal: request.signal,
				native: responsesNative({ body: wire, ir, inbound: request.headers, signal: request.signal, holder: holds ? holder : undefined, compact: true }),
			})
		},
		{
			body: ResponsesRequest,
			response: { 200: CompactedResponse, 400: OpenAIErrorBody, 401: OpenAIErrorBody, 402: OpenAIErrorBody, 403: OpenAIErrorBody, 404: OpenAIErrorBody, 429: OpenAIErrorBody, 502: OpenAIErrorBody },
			detail: {
				summary: 'Compact a conversation',
				description:
					"OpenAI's `responses.compact` for models served by an OpenAI channel (the body verbatim, billed from the answer's `usage`): the answer's `output` is the conversation's user messages and one `compaction` item to send as input next turn. Its compaction item is encrypted for OpenAI alone, so other vendors' models answer 400 `unsupported_for_model`. A `previous_response_id` that is not the caller's is 400 `previous_response_not_found`.",
			},
		},
	)
