/**
 * The same tokens cost the same whichever protocol the client speaks and whether it streams: every token kind a
 * vendor reports (cache reads, Anthropic cache writes, OpenAI reasoning, Gemini thoughts) priced once, with one half-up
 * rounding. Each vendor is a fixed-usage fake here, so the expected micro-USD are computed by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { allUsage, type Cluster, type Instance, startCluster } from './instances'

/** USD per million tokens = micro-USD per token; fractional, so rounding shows. */
const PRICE = { input_per_mtok: 3.3, output_per_mtok: 16.5, cache_read_per_mtok: 0.33, cache_write_per_mtok: 4.125 }

/** The usage each fake vendor reports, in its own words, and what it costs (micro-USD, by hand). */
const EXPECTED = {
	// 100 uncached + 50 cached prompt tokens, 60 output of which 20 reasoning: 330 + 16.5 + 990 = 1336.5
	openai: { cost: 1337, input: 150, cached: 50, output: 60, reasoning: 20, cacheWrite: 0 },
	// + 30 cache-write tokens at 4.125: 1336.5 + 123.75 = 1460.25
	anthropic: { cost: 1460, input: 180, cached: 50, output: 60, reasoning: 0, cacheWrite: 30 },
	// thoughts are output: 40 candidates + 20 thoughts
	gemini: { cost: 1337, input: 150, cached: 50, output: 60, reasoning: 20, cacheWrite: 0 },
}
type Vendor = keyof typeof EXPECTED

const sse = (frames: string[]) =>
	new Response(frames.join(''), { headers: { 'content-type': 'text/event-stream' } })
const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`
const event = (name: string, o: unknown) => `event: ${name}\ndata: ${JSON.stringify(o)}\n\n`

/** One server answering as OpenAI (/v1/chat/completions), Anthropic (/v1/messages) and Gemini (/v1beta/…). */
function startVendors() {
	return Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		async fetch(req) {
			const url = new URL(req.url)
			const body = (await req.json()) as Record<string, any>
			if (url.pathname === '/v1/chat/completions') {
				const usage = { prompt_tokens: 150, completion_tokens: 60, total_tokens: 210, prompt_tokens_details: { cached_tokens: 50 }, completion_tokens_details: { reasoning_tokens: 20 } }
				const base = { id: 'chatcmpl-1', created: 1, model: body.model }
				if (!body.stream) return Response.json({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'fixed answer' }, finish_reason: 'stop' }], usage })
				const chunk = (delta: unknown, finish: string | null) => data({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], usage: null })
				return sse([chunk({ role: 'assistant', content: 'fixed' }, null), chunk({ content: ' answer' }, null), chunk({}, 'stop'), data({ ...base, object: 'chat.completion.chunk', choices: [], usage }), 'data: [DONE]\n\n'])
			}
			if (url.pathname === '/v1/messages') {
				const usage = { input_tokens: 100, cache_read_input_tokens: 50, cache_creation_input_tokens: 30, output_tokens: 60 }
				const msg = { id: 'msg_1', type: 'message', role: 'assistant', model: body.model, stop_reason: 'end_turn', stop_sequence: null }
				if (!body.stream) return Response.json({ ...msg, content: [{ type: 'text', text: 'fixed answer' }], usage })
				return sse([
					event('message_start', { type: 'message_start', message: { ...msg, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }),
					event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
					event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'fixed answer' } }),
					event('content_block_stop', { type: 'content_block_stop', index: 0 }),
					event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 60 } }),
					event('message_stop', { type: 'message_stop' }),
				])
			}
			const m = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname)
			if (m) {
				const usageMetadata = { promptTokenCount: 150, cachedContentTokenCount: 50, candidatesTokenCount: 40, thoughtsTokenCount: 20, totalTokenCount: 210 }
				const cand = (text: string, finish?: string) => ({ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish && { finishReason: finish }) })
				if (m[2] === 'generateContent') return Response.json({ candidates: [cand('fixed answer', 'STOP')], usageMetadata, modelVersion: m[1] })
				return sse([data({ candidates: [cand('fixed')], modelVersion: m[1] }), data({ candidates: [cand(' answer', 'STOP')], usageMetadata, modelVersion: m[1] })])
			}
			return new Response('not found', { status: 404 })
		},
	})
}

type Proto = 'chat' | 'messages' | 'gemini' | 'responses'

async function ask(node: Instance, key: string, proto: Proto, model: string, stream: boolean): Promise<number> {
	const text = 'price me'
	const req =
		proto === 'chat'
			? { path: '/v1/chat/completions', body: { model, stream, max_tokens: 100, messages: [{ role: 'user', content: text }] } }
			: proto === 'messages'
				? { path: '/v1/messages', body: { model, stream, max_tokens: 100, messages: [{ role: 'user', content: text }] } }
				: proto === 'gemini'
					? { path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body: { contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 100 } } }
					: { path: '/v1/responses', body: { model, stream, max_output_tokens: 100, input: text } }
	const res = await fetch(node.url + req.path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(req.body) })
	const body = await res.text()
	if (res.status !== 200) throw new Error(`${proto} ${model} stream=${stream}: ${res.status} ${body}`)
	return res.status
}

let vendors: ReturnType<typeof startVendors>
let cl: Cluster
beforeAll(async () => {
	vendors = startVendors()
	const root = `http://127.0.0.1:${vendors.port}`
	cl = await startCluster(1, {
		channels: [
			{ name: 'o', type: 'openai', base_url: `${root}/v1`, api_key: 'k', models: ['p-openai'], settings: { responses_api: false } },
			{ name: 'a', type: 'anthropic', base_url: root, api_key: 'k', models: ['p-anthropic'] },
			{ name: 'g', type: 'gemini', base_url: root, api_key: 'k', models: ['p-gemini'] },
		],
		models: (['openai', 'anthropic', 'gemini'] as const).map((v) => ({ name: `p-${v}`, ...PRICE })),
	})
}, 60_000)
afterAll(async () => {
	await cl.close()
	vendors.stop(true)
})

describe('the same usage costs the same in every protocol, streamed or not', () => {
	for (const vendor of Object.keys(EXPECTED) as Vendor[])
		it(`should charge ${EXPECTED[vendor].cost} micro-USD for the ${vendor} upstream's usage, whatever the client protocol`, async () => {
			const { key, accountId } = await cl.account(1)
			const calls: Array<[Proto, boolean]> = []
			for (const proto of ['chat', 'messages', 'gemini', 'responses'] as Proto[]) for (const stream of [false, true]) calls.push([proto, stream])
			for (const [proto, stream] of calls) await ask(cl.nodes[0]!, key, proto, `p-${vendor}`, stream)
			await cl.nodes[0]!.svc.ledger.flush()
			const rows = (await allUsage(cl.nodes[0]!, accountId)).reverse()
			const e = EXPECTED[vendor]
			const seen = rows.map((r, i) => ({
				call: label(calls[i]!),
				cost: Math.round(r.cost * 1e6),
				input: r.input_tokens,
				cached: r.cached_tokens,
				cacheWrite: r.cache_write_tokens,
				output: r.output_tokens,
				reasoning: r.reasoning_tokens,
			}))
			expect(seen).toEqual(calls.map((c) => ({ call: label(c), cost: e.cost, input: e.input, cached: e.cached, cacheWrite: e.cacheWrite, output: e.output, reasoning: e.reasoning })))
			expect(Math.round((await cl.nodes[0]!.admin(`/api/accounts/${accountId}`)).body.balance * 1e6)).toBe(1_000_000 - e.cost * calls.length)
		})
})

const label = ([proto, stream]: [Proto, boolean]) => `${proto}${stream ? ' streamed' : ''}`
