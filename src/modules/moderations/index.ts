/**
 * POST /v1/moderations: OpenAI passthrough (body forwarded with only `model` renamed, answer relayed). Priced
 * `per_request` plus the input's tokens at `input_per_mtok` (the upstream's `usage.prompt_tokens` when it reports
 * them, else counted here) when the model has a price; a moderation model with no price entry is free (OpenAI does
 * not charge for moderation), unlike other endpoints where an unpriced model is refused.
 * @module
 */
import { Elysia, t } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { requestFee, tokensCost } from '../../passthrough/pricing'
import { jsonResponse, readJson, relayPassthrough, routeFor } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { channelUrl, jsonHeaders, withModel } from '../../passthrough/upstream'
import { countText } from '../../relay/estimate'
import type { Services } from '../../services'

/** OpenAI's default when the request names no model. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest'

export const ModerationRequest = t.Object(
	{
		input: t.Union([t.String(), t.Array(t.String(), { minItems: 1 }), t.Array(t.Record(t.String(), t.Unknown()), { minItems: 1, description: 'Multi-modal inputs: {type:"text",text} | {type:"image_url",image_url:{url}}' })]),
		model: t.Optional(t.String({ minLength: 1 })),
	},
	{ additionalProperties: true },
)

export const ModerationResponse = t.Object(
	{ id: t.String(), model: t.String(), results: t.Array(t.Object({ flagged: t.Boolean(), categories: t.Record(t.String(), t.Boolean()), category_scores: t.Record(t.String(), t.Number()) }, { additionalProperties: true })) },
	{ additionalProperties: true },
)

export const moderationsModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/moderations',
		({ body, token, requestId, startedAt, request }) => {
			const model = body.model ?? DEFAULT_MODERATION_MODEL
			const text = typeof body.input === 'string' ? body.input : body.input.map((x) => (typeof x === 'string' ? x : typeof x.text === 'string' ? x.text : '')).join('\n')
			const input = countText(text)
			return relayPassthrough({
				svc,
				token,
				requestId,
				startedAt,
				signal: request.signal,
				endpoint: '/v1/moderations',
				model,
				route: routeFor(svc, token, model, true),
				types: ['openai'],
				hold: (p) => ({ want: requestFee(p) + tokensCost(p, input), min: requestFee(p) + tokensCost(p, input) }),
				request: (ch, upstreamModel) => ({ url: channelUrl(ch, '/moderations'), headers: jsonHeaders(ch), body: JSON.stringify(withModel({ ...body, model }, upstreamModel)) }),
				async respond(res, _ch, upstreamModel, p) {
					const json = await readJson<{ model?: unknown; usage?: { prompt_tokens?: unknown } }>(res)
					if (upstreamModel !== model && typeof json.model === 'string') json.model = model
					const reported = json.usage?.prompt_tokens
					const tokens = typeof reported === 'number' && Number.isSafeInteger(reported) && reported >= 0 ? reported : input
					return { response: jsonResponse(json, requestId), cost: requestFee(p) + tokensCost(p, tokens), input: tokens, estimated: tokens !== reported }
				},
			})
		},
		{
			body: ModerationRequest,
			response: { 200: ModerationResponse, ...openaiErrors },
			detail: { summary: 'Classify text (and images) for policy violations', description: 'OpenAI moderations passthrough. Priced `per_request` plus the input tokens at `input_per_mtok`, or free when the model has no price.' },
		},
	)
