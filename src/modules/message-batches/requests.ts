/**
 * Reading a message batch (`{requests: [{custom_id, params}]}`, platform.claude.com/docs/en/api/messages/batches/create),
 * choosing the one Anthropic channel that runs it, and bounding what it can cost at batch prices, so the whole batch
 * is held before the upstream runs it and the gateway never pays for more than it held.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { type Price, type Reach, WEB_SEARCH_PRICE, searchHold, upperBound } from '../../billing/pricing'
import { GatewayError } from '../../core/errors'
import { anthropicMessages } from '../../protocols/anthropic-messages'
import { type Route, resolveModel } from '../../relay/budget'
import { boundInputTokens } from '../../relay/estimate'
import { mediaOnChannels } from '../../relay/image-tokens'
import { reachOf } from '../../relay/reach'
import type { Channel } from '../../routing/catalog'
import { orderChannels } from '../../routing/select'
import type { Services } from '../../services'
import { batchPrice } from '../batches/price'
import { isObject } from '../../core/json'

type Obj = Record<string, unknown>
export type BatchRequest = { customId: string; model: string; params: Obj }

const refuse = (message: string, param?: string) => new GatewayError('invalid_request', message, { code: 'invalid_request', param })
/** Anthropic's rule for a `custom_id`. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/
/** Anthropic takes up to 100,000 requests a batch. */
const MAX_REQUESTS = 100_000

/** The batch's requests; refuses (400, naming the request) one without a custom_id, model or max_tokens. */
export function parseRequests(requests: unknown[]): BatchRequest[] {
	if (!requests.length) throw refuse('requests: a batch needs at least one request', 'requests')
	if (requests.length > MAX_REQUESTS) throw refuse(`requests: a batch holds at most ${MAX_REQUESTS} requests`, 'requests')
	const seen = new Set<string>()
	return requests.map((r, i) => {
		if (!isObject(r) || typeof r.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id)) throw refuse(`requests.${i}.custom_id: must be 1-64 letters, digits, '_' or '-'`, 'requests')
		if (seen.has(r.custom_id)) throw refuse(`requests.${i}.custom_id: '${r.custom_id}' is repeated; each must be unique in the batch`, 'requests')
		seen.add(r.custom_id)
		const p = r.params
		if (!isObject(p) || typeof p.model !== 'string' || !p.model) throw refuse(`requests.${i}.params.model: Field required`, 'requests')
		if (typeof p.max_tokens !== 'number' || !Number.isInteger(p.max_tokens) || p.max_tokens < 1) throw refuse(`requests.${i}.params.max_tokens: a whole number of at least 1 is required`, 'requests')
		return { customId: r.custom_id, model: p.model, params: p }
	})
}

/**
 * The first Anthropic channel, in routing order, that serves every model the batch names, and each model's route.
 * A model the key may not use, or unknown here, is refused as a message would be (403, 404); one that only another
 * vendor's channels serve, or models no one Anthropic channel serves together, are 400 naming the request. A batch
 * naming Files API uploads runs on the channel holding them (`filesOn`, anthropic-files/refs.ts): no other key reads them.
 */
export function batchChannel(svc: Services, token: AuthToken, reqs: BatchRequest[], filesOn?: number): { ch: Channel; routes: Map<string, Route> } {
	const routes = new Map<string, Route>()
	for (const r of reqs) {
		if (routes.has(r.model)) continue
		const route = resolveModel(svc, token, r.model)
		if (!route.channels.some((c) => c.type === 'anthropic'))
			throw refuse(`The model "${r.model}" (request '${r.customId}') is not served by an Anthropic channel; a message batch runs on Anthropic's Message Batches API, for Claude models only`, 'requests')
		routes.set(r.model, route)
	}
	const first = routes.get(reqs[0]!.model)!
	const candidates = first.channels.filter((c) => c.type === 'anthropic' && (filesOn === undefined || c.id === filesOn))
	const ch = orderChannels(candidates).find((c) => [...routes.values()].every((rt) => rt.channels.some((x) => x.id === c.id)))
	if (!ch && filesOn !== undefined)
		throw refuse(
			`The files this batch names (Anthropic's Files API) are readable only on the channel they were uploaded to, which does not serve all of its models (${[...routes.keys()].join(', ')}); send those requests in a batch of the models it serves, or send the content itself`,
			'requests',
		)
	if (!ch) throw refuse(`No one Anthropic channel serves all of the batch's models (${[...routes.keys()].join(', ')}); a batch runs on one channel, so send one batch per model`, 'requests')
	return { ch, routes }
}

/**
 * A message batch request's price: Anthropic's 50% batch discount on every token price, cache reads and writes
 * included (the model's `batch_input_per_mtok` / `batch_output_per_mtok` when set: batches/price.ts); a web search
 * costs what it does outside a batch (the discount is on tokens).
 */
export function messageBatchPrice(p: Price): Price {
	const b = batchPrice(p)
	const search = p.prices?.[WEB_SEARCH_PRICE]
	return search === undefined ? b : { ...b, prices: { ...b.prices, [WEB_SEARCH_PRICE]: search } }
}

/**
 * The most the requests can cost at batch prices, micro-USD: each one's input bound (its tokens as a message
 * reserves them, or a token per byte of its params, whichever is more) plus its `max_tokens`, at the token kinds it
 * can produce (1-hour cache writes, web searches: relay/reach.ts).
 */
export function batchBound(reqs: BatchRequest[], routes: Map<string, Route>, ch: Channel): number {
	const enc = new TextEncoder()
	let total = 0
	for (const r of reqs) {
		const route = routes.get(r.model)!
		const price = messageBatchPrice(route.price)
		const bytes = enc.encode(JSON.stringify(r.params)).byteLength
		let input = bytes
		let reach: Reach | undefined
		try {
			const ir = anthropicMessages.decodeRequest(r.params as never)
			input = Math.max(bytes, boundInputTokens(ir, undefined, mediaOnChannels([ch], ir)))
			reach = reachOf({ ir, body: r.params, client: anthropicMessages }, { channels: [ch], price: { ...route.price, ...price } })
		} catch {
			// Params the codec refuses are refused by Anthropic too (an errored result, not billed): their bytes bound them.
		}
		total += upperBound(input, r.params.max_tokens as number, price, reach) + searchHold(price, reach)
	}
	return total
}

/** The batch's body for the channel: each request's model under the channel's name for it (`model_map`). */
export const upstreamBody = (reqs: BatchRequest[], ch: Channel): Obj => ({
	requests: reqs.map((r) => ({ custom_id: r.customId, params: { ...r.params, model: ch.modelMap[r.model] ?? r.model } })),
})
