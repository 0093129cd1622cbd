/** POST /v1/completions: OpenAI's legacy text completions, relayed to OpenAI-protocol channels (relay.ts). */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { keepRawJson, rawJson } from '../../http/raw-json'
import { openaiErrors } from '../../passthrough/schemas'
import type { Services } from '../../services'
import { CompletionRequest, TextCompletion } from './model'
import { relayCompletion } from './relay'

export const completionsModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/completions',
		({ body, token, requestId, startedAt, request }) => relayCompletion({ svc, token, requestId, startedAt, body, raw: rawJson(request), signal: request.signal }),
		{
			parse: keepRawJson,
			body: CompletionRequest,
			response: { 200: TextCompletion, ...openaiErrors },
			detail: {
				summary: 'Create a completion (legacy)',
				description:
					'OpenAI legacy text completions (gpt-3.5-turbo-instruct, davinci-002, FIM on OpenAI-compatible servers) for models an OpenAI-type channel serves: the body is forwarded as written (the model renamed), the answer relayed as the upstream wrote it. With `stream: true` the answer is `text/event-stream` of `text_completion` chunks ending in `data: [DONE]`. Billed on the usage the upstream reports (estimated when it reports none). A model only other protocols serve answers 400.',
			},
		},
	)
