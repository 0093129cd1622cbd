/** POST /v1/messages/count_tokens: Anthropic's token counting, for every model. Not billed. */
import { Elysia, t } from 'elysia'
import { isObject } from '../../core/json'
import { Integer } from '../../protocols/json-types'
import { modelAuth } from '../../http/model-auth'
import { AnthropicErrorBody, AnthropicRequest, anthropicMessages } from '../../protocols/anthropic-messages'
import { REQUEST_ID_HEADER } from '../../protocols/anthropic-messages/error'
import { DEFAULT_MAX_TOKENS } from '../../protocols/anthropic-messages/request-encode'
import { unpairedCalls } from '../../relay/upstream-codec'
import type { Services } from '../../services'
import { fileTerms } from '../anthropic-files/refs'
import { countTokens } from './counter'

const { max_tokens: _maxTokens, stream: _stream, ...countFields } = AnthropicRequest.properties

/** The messages body without `max_tokens` (https://docs.anthropic.com/en/api/messages-count-tokens). */
export const AnthropicCountTokensRequest = t.Object(countFields, { additionalProperties: true })

export const AnthropicCountTokensResponse = t.Object({ input_tokens: Integer() })

export const countTokensModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Anthropic'] } }).use(modelAuth(svc)).post(
		'/v1/messages/count_tokens',
		async ({ body, token, requestId, request }) => {
			const wire = body as Record<string, unknown>
			// The codec requires max_tokens (and one above a thinking budget); counting does not use it.
			const budget = body.thinking?.type === 'enabled' ? body.thinking.budget_tokens : 0
			const ir = anthropicMessages.decodeRequest({ ...body, max_tokens: Math.max(DEFAULT_MAX_TOKENS, budget + 1) })
			// Refused as /v1/messages refuses it, whichever vendor counts (the estimate would count it, Gemini's encoder refuse
			// it in the gateway's words).
			const thread = isObject(wire.thread) && (wire.thread.type === 'create' || wire.thread.type === 'continue')
			const unpaired = unpairedCalls(anthropicMessages, wire, thread)
			if (unpaired) throw unpaired
			// Files API uploads named are the account's (else 404) and counted by the channel holding them, with the beta.
			const files = await fileTerms(svc, wire, token, request.headers)
			const counted = await countTokens({
				svc,
				token,
				requestId,
				model: body.model,
				ir,
				native: { protocol: 'anthropic-messages', body: wire },
				inbound: files?.inbound ?? request.headers,
				signal: request.signal,
				channelId: files?.channelId,
				mcp: { client: 'anthropic-messages', body: wire, beta: request.headers.get('anthropic-beta') },
			})
			return Response.json({ input_tokens: counted.tokens }, { headers: { 'x-request-id': requestId, [REQUEST_ID_HEADER]: requestId, 'x-switchboard-counted-by': counted.by } })
		},
		{
			body: AnthropicCountTokensRequest,
			response: { 200: AnthropicCountTokensResponse, 400: AnthropicErrorBody, 401: AnthropicErrorBody, 403: AnthropicErrorBody, 404: AnthropicErrorBody, 429: AnthropicErrorBody },
			detail: {
				summary: 'Count the tokens of a message',
				description: 'Anthropic count_tokens for any model: counted by Anthropic, Gemini, Vertex AI or Amazon Bedrock (Claude) for their models, estimated locally for the others or when the vendor refuses (header `x-switchboard-counted-by`). Not billed.',
			},
		},
	)
