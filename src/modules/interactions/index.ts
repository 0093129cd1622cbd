/**
 * Gemini's Interactions API for every model (https://ai.google.dev/api/interactions-api), under `/v1beta` and `/v1`
 * (where @google/genai calls it by default): create (create.ts; `background: true` in background.ts), and the
 * interactions this gateway keeps (store.ts): `GET /interactions/{id}` (its input steps, then its output steps;
 * `include_input=true` adds `input`; `stream=true` its events, events.ts), `DELETE`, and `cancel` of a running
 * background interaction. Keys as on Gemini's other routes; errors in Gemini's shape.
 * @module
 */
import { Elysia, t } from 'elysia'
import { badRequest, GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { GeminiErrorBody } from '../../protocols/gemini'
import { Interaction, InteractionRequest } from '../../protocols/gemini-interactions/model'
import type { Services } from '../../services'
import { createInteraction } from './create'
import { followHere, isRunningHere, stopHere } from './background'
import { errorEvent } from '../../protocols/gemini-interactions/error'
import { eventsOf, resumeAt, sseResponse } from './events'
import { interactionStore, type KeptInteraction, STALE_MS } from './store'
import { GoogleKeyQuery } from '../models/model'

/** How often a stream of an interaction running on another instance looks for its end. */
const POLL_MS = 500

const errors = { 400: GeminiErrorBody, 401: GeminiErrorBody, 402: GeminiErrorBody, 403: GeminiErrorBody, 404: GeminiErrorBody, 429: GeminiErrorBody, 500: GeminiErrorBody, 503: GeminiErrorBody }

const notFound = (id: string) => new GatewayError('not_found', `Interaction '${id}' not found.`, { code: 'not_found' })

const json = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })

const description =
	'Gemini Interactions for any model (`background: true` runs it in the gateway: answered `in_progress`, polled with GET): `input` as a string, content, or steps (user_input, model_output, thought, function_call, function_result); `system_instruction`, function `tools`, `generation_config` (max_output_tokens, temperature, top_p, seed, stop_sequences, thinking_level, thinking_summaries, tool_choice), `response_format` (JSON). Gemini, OpenAI and Anthropic models are converted through the canonical model and billed as chat is. Kept unless `store: false`: `previous_interaction_id` continues a kept interaction of the account (its conversation goes before `input`; system_instruction, tools and generation_config are not carried over). `cached_content` names a context cache of the account\'s (`/v1beta/cachedContents`), put in front of the interaction for any model. A `google_search` tool runs as the serving vendor\'s web search, its citations `url_citation` annotations of the text; Google\'s other built-in tools and agents are refused (400). With `stream: true` the answer is `text/event-stream` of `interaction.created`, `step.start`/`step.delta`/`step.stop` and `interaction.completed` events, then `done` (`[DONE]`).'

export const interactionsModule = (svc: Services) => {
	const store = interactionStore({ db: svc.db, log: svc.log })
	/** The account's interaction `id` as it stands (404 otherwise); a background run whose instance died is failed. */
	const current = async (id: string, accountId: number) => {
		const kept = await store.get(accountId, id)
		if (!kept) throw notFound(id)
		if (kept.interaction.status === 'in_progress' && !isRunningHere(id) && kept.updatedAt && Date.now() - kept.updatedAt.getTime() > STALE_MS) {
			const failed = await store.stop(accountId, id, 'failed', true)
			if (failed) return { ...kept, interaction: failed }
		}
		return kept
	}
	/**
	 * The events of `kept` after `lastEventId`: a background run's live where it runs, kept once it ended; an
	 * interaction not run in the background's made from it. One running on another instance is awaited (its row
	 * polled) with the response begun, so the client is not left without headers meanwhile.
	 */
	const streamOf = (kept: KeptInteraction, accountId: number, lastEventId: string | undefined, signal: AbortSignal): AsyncIterable<string> | string[] => {
		const live = followHere(kept.id, lastEventId, signal)
		if (live) return live
		const after = (k: KeptInteraction) => {
			const events = k.events ?? eventsOf(k.interaction)
			return events.slice(resumeAt(events, lastEventId))
		}
		if (kept.interaction.status !== 'in_progress' || kept.events) return after(kept)
		return (async function* () {
			try {
				while (kept.interaction.status === 'in_progress' && !kept.events) {
					await Bun.sleep(POLL_MS)
					if (signal.aborted) return
					kept = await current(kept.id, accountId)
					const now = followHere(kept.id, lastEventId, signal)
					if (now) return yield* now
				}
				yield* after(kept)
			} catch (e) {
				// Deleted meanwhile, or a `last_event_id` it never sent: the stream ends with the error.
				if (e instanceof GatewayError) yield errorEvent(e).data
				else throw e
			}
		})()
	}
	const routes = (version: '/v1beta' | '/v1') => {
		const hide = version === '/v1'
		return new Elysia({ detail: { tags: ['Gemini'] } })
			.use(modelAuth(svc, { gemini: true }))
			.post(`${version}/interactions`, ({ body, token, requestId, startedAt, request }) => createInteraction({ svc, store, token, requestId, startedAt, request, version }, body), {
			body: InteractionRequest,
			response: { 200: Interaction, ...errors },
			detail: { summary: 'Create an interaction', description, hide },
		})
			.get(
				`${version}/interactions/:id`,
				async ({ params, query, token, request }) => {
					const kept = await current(params.id, token.accountId)
					if (query.stream === 'true') return sseResponse(streamOf(kept, token.accountId, query.last_event_id, request.signal))
					// The stored resource has the user_input steps before the model's, "for full context" (a create answers only the
					// model's: https://ai.google.dev/gemini-api/docs/interactions#how-it-works); `include_input` adds the request's `input`.
					const steps = Array.isArray(kept.interaction.steps) ? kept.interaction.steps : []
					return json({ ...kept.interaction, steps: [...kept.input, ...steps], ...(query.include_input === 'true' && { input: kept.input }) })
				},
				{
					query: t.Object({ include_input: t.Optional(t.String()), stream: t.Optional(t.String()), last_event_id: t.Optional(t.String()), key: GoogleKeyQuery }),
					response: { 200: Interaction, ...errors },
					detail: {
						summary: 'Get an interaction',
						description:
							"An interaction kept for the calling account (404 for any other): its input steps, then its output steps; `include_input=true` adds the request's `input` (as steps). `stream=true` gives its events as `text/event-stream` (a running background interaction's live), after `last_event_id` when given.",
						hide,
					},
				},
			)
			.delete(
				`${version}/interactions/:id`,
				async ({ params, token }) => {
					if (!(await store.delete(token.accountId, params.id))) throw notFound(params.id)
					return json({})
				},
				{ response: { 200: t.Object({}), ...errors }, detail: { summary: 'Delete an interaction', hide } },
			)
			.post(
				`${version}/interactions/:id/cancel`,
				async ({ params, token }) => {
					const kept = await current(params.id, token.accountId)
					const stopped = kept.interaction.status === 'in_progress' ? await store.stop(token.accountId, params.id, 'cancelled') : undefined
					if (!stopped)
						throw badRequest(`Interaction '${params.id}' has already finished (status ${String(kept.interaction.status)}): only a running background interaction can be cancelled`, 'id')
					// Stopped here at once, or by the instance running it at its next heartbeat (background.ts).
					const steps = stopHere(params.id) ?? []
					return json({ ...stopped, steps: [...kept.input, ...steps] })
				},
				{
					response: { 200: Interaction, ...errors },
					detail: { summary: 'Cancel an interaction', description: 'Stops a running background interaction (billed for what ran): status `cancelled`. A finished one is 400.', hide },
				},
			)
	}
	return new Elysia({ name: 'interactions' }).use(routes('/v1beta')).use(routes('/v1'))
}
