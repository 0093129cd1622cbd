/**
 * `POST /v1beta/interactions` for every model: the body is decoded by the Interactions codec and relayed like any chat
 * request (one reservation, one bill, the usage row under this endpoint), the answer shown as an Interaction or its
 * step events. Kept for `GET` and `previous_interaction_id` unless `store: false` (store.ts); the end of the answer
 * waits for the write (responses/kept-first.ts), so a continuation sent at once finds it.
 *
 * `previous_interaction_id` names a kept interaction of the account (else 404, as Gemini answers an unknown id): its
 * chain's inputs and outputs, in turn order, go before `input`. Only the conversation is carried over:
 * `system_instruction`, `tools` and `generation_config` are the new request's own ("interaction-scoped",
 * https://ai.google.dev/gemini-api/docs/interactions#stateful-conversation).
 *
 * `cached_content` names a context cache of the account's (cache.ts): it goes before all of that, the name to no upstream.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { badRequest, GatewayError } from '../../core/errors'
import { interactionId, interactionsCodec } from '../../protocols/gemini-interactions'
import type { InteractionRequest } from '../../protocols/gemini-interactions/model'
import { decodeRequest } from '../../protocols/gemini-interactions/request'
import { decodeInput, encodeSteps } from '../../protocols/gemini-interactions/steps'
import { type ChatCall, relayChat } from '../../relay/chat'
import { pinRequestFiles } from '../gemini-files/refs'
import type { Services } from '../../services'
import { keptFirst } from '../responses/kept-first'
import { iso } from '../../protocols/gemini-interactions/response'
import { followHere, runInBackground } from './background'
import { loadCache, putCacheFirst } from './cache'
import { sseResponse } from './events'
import { interactionsNative } from './native'
import type { InteractionStore, KeptInteraction } from './store'

type Obj = Record<string, unknown>

export type CreateCall = { svc: Services; store: InteractionStore; token: AuthToken; requestId: string; startedAt: number; request: Request; version: string }

export async function createInteraction(c: CreateCall, body: InteractionRequest): Promise<Response> {
	const wire = { ...(body as Obj) }
	const background = wire.background === true
	// A background interaction runs as a stream only the gateway reads (background.ts).
	const stream = wire.stream === true || background
	const store = wire.store !== false
	// It is read back by `GET`: there is nothing to poll without it.
	if (background && !store) throw badRequest('background: a background interaction is read back by `GET`, so it needs `store` (true, the default)', 'background')
	// A context cache of the gateway's (cache.ts), read and checked first as Google does; its name goes to no upstream.
	const cacheName = wire.cached_content
	const cache = cacheName === undefined || cacheName === null ? undefined : await loadCache(c.svc, c.token.accountId, wire, cacheName)
	if (cache) delete wire.cached_content
	const previous = typeof wire.previous_interaction_id === 'string' && wire.previous_interaction_id ? wire.previous_interaction_id : undefined
	const chain = previous ? await continued(c, previous) : undefined
	// The request's own input as steps: what is kept for the turns that continue it.
	const sent = wire.input === undefined ? [] : encodeSteps(decodeInput(wire.input))
	const own = chain ? withoutRepeatedOutput(sent, chain.at(-1)!.interaction.steps) : sent
	if (chain) wire.input = [...conversation(chain), ...own]
	const ir = decodeRequest(wire as InteractionRequest, { stream })
	if (cache) putCacheFirst(ir, cache)
	// Files uploaded through the gateway, named by `uri`: to the channel holding them (modules/gemini-files/refs.ts).
	const fileChannel = await pinRequestFiles(c.svc, c.token.accountId, ir)
	const id = interactionId()
	let kept: Promise<void> | undefined
	let final: Obj | undefined
	const echo = echoed(body as Obj, previous)
	const client = interactionsCodec({
		id,
		echo,
		keep: background ? (interaction) => void (final = interaction) : store ? (interaction) => void (kept = c.store.keep(c.token.accountId, interaction, own, previous)) : undefined,
	})
	// The background run outlives the request: only a cancel stops it.
	const signal = background ? new AbortController().signal : c.request.signal
	const call: ChatCall = {
		svc: c.svc,
		token: c.token,
		requestId: c.requestId,
		startedAt: c.startedAt,
		endpoint: `${c.version}/interactions`,
		shape: 'gemini',
		client,
		body: wire,
		ir,
		includeUsage: false,
		inbound: c.request.headers,
		signal,
		native: interactionsNative(() => call),
		pinned: fileChannel === undefined ? undefined : { channelId: fileChannel, what: 'A file this interaction names' },
	}
	const res = await relayChat(call)
	if (background) return startBackground(c, res, { id, own, previous, echo, model: ir.model, stream: wire.stream === true, final: () => final })
	return store ? keptFirst(res, () => kept) : res
}

type Started = { id: string; own: Obj[]; previous?: string; echo?: Obj; model: string; stream: boolean; final: () => Obj | undefined }

/**
 * The relay of a background interaction has begun (else its error goes back as it is): the interaction is kept
 * `in_progress` and answered at once, or with `stream: true` its events followed live; the run goes on without the client.
 */
async function startBackground(c: CreateCall, res: Response, s: Started): Promise<Response> {
	if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res
	const now = iso()
	const shell: Obj = { id: s.id, object: 'interaction', model: s.model, status: 'in_progress', created: now, updated: now, ...s.echo }
	try {
		await c.store.keep(c.token.accountId, shell, s.own, s.previous, true)
	} catch (e) {
		// Not kept, it could never be read: the run is cut (billed for what ran, nothing yet) and the POST fails.
		await res.body.cancel().catch(() => {})
		throw e
	}
	runInBackground({ svc: c.svc, store: c.store, accountId: c.token.accountId, id: s.id, body: res.body, final: s.final, shell })
	if (s.stream) return sseResponse(followHere(s.id, undefined)!)
	return new Response(JSON.stringify(shell), { headers: { 'content-type': 'application/json', 'x-request-id': c.requestId } })
}

/** The request's fields an Interaction resource shows as it was asked (https://ai.google.dev/api/interactions-api#Resource:Interaction). */
const ECHOED = ['system_instruction', 'tools', 'generation_config', 'response_format', 'response_mime_type', 'response_modalities', 'previous_interaction_id', 'cached_content'] as const

const echoed = (body: Obj, previous: string | undefined): Obj | undefined => {
	const out: Obj = {}
	for (const k of ECHOED) if (body[k] !== undefined && body[k] !== null) out[k] = body[k]
	if (previous) out.previous_interaction_id = previous
	return Object.keys(out).length ? out : undefined
}

/** The chain `previous` ends, or the 404 of an id the account has not kept. */
async function continued(c: CreateCall, previous: string): Promise<KeptInteraction[]> {
	const chain = await c.store.chain(c.token.accountId, previous)
	if (!chain)
		throw new GatewayError('not_found', `Interaction '${previous}' not found. It may have been created with store: false, deleted, or by another key's account.`, {
			code: 'not_found',
			param: 'previous_interaction_id',
		})
	if (chain.at(-1)!.interaction.status === 'in_progress')
		throw badRequest(`Interaction '${previous}' is still running in the background: continue it once it has ended (poll it with GET)`, 'previous_interaction_id')
	if (chain[0]!.previous !== null)
		throw badRequest(
			`Interaction '${previous}' cannot be continued: an earlier interaction of its conversation is gone. Send the whole conversation in \`input\` instead.`,
			'previous_interaction_id',
		)
	return chain
}

/**
 * The input without its leading model steps that the continued interaction already output. Google's ADK
 * (`@google/adk` interactions_utils `getLatestUserContents`) answers function calls by sending the calls again before
 * their results, although `previous_interaction_id` already holds them; kept twice they would reach the model twice,
 * which Gemini refuses (400 "Please ensure that the number of function response parts is equal to the number of
 * function call parts of the function call turn") and Claude too (tool_use ids must be unique).
 */
function withoutRepeatedOutput(input: Obj[], output: unknown): Obj[] {
	const done = Array.isArray(output) ? (output as Obj[]) : []
	// A call is known by its id, a thought by its signature (its summary may or may not be sent back), text by itself.
	const key = (s: Obj): string => JSON.stringify(s.type === 'function_call' && s.id ? [s.type, s.id] : s.type === 'thought' && s.signature ? [s.type, s.signature] : s)
	const known = new Set(done.map(key))
	let lead = 0
	while (lead < input.length && MODEL_STEPS.has(String(input[lead]!.type))) lead++
	return [...input.slice(0, lead).filter((s) => !known.has(key(s))), ...input.slice(lead)]
}

const MODEL_STEPS = new Set(['model_output', 'thought', 'function_call'])

/** A chain's conversation as steps: each turn's input, then its output. */
const conversation = (chain: KeptInteraction[]): Obj[] => chain.flatMap((k) => [...k.input, ...(Array.isArray(k.interaction.steps) ? (k.interaction.steps as Obj[]) : [])])
