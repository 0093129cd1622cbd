/**
 * An in-process gateway for the fault tests: an OpenAI mock behind the primary channels (the one faults are injected
 * into) and an Anthropic mock behind the fallback.
 * - model `dual`: channel `pri` (OpenAI mock, priority 0) then `fallback` (Anthropic mock, priority 1)
 * - model `solo`: channel `solo` only (the same OpenAI mock), so a fault there reaches the client
 * - model `raw`: channel `raw`, a hand-written OpenAI-compatible upstream (`rig.raw.reply`) for byte-level faults
 * Both primary channels give up on a first byte after FIRST_BYTE_MS (slow and hanging upstreams).
 * @module
 */
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { readAnswer, startTestApp, type TestApp } from '../../helpers/app'
import { AVAILABLE_BALANCE_SQL } from '../../../src/billing/views'

export const UP_KEY = { openai: 'up-openai-secret-0001', anthropic: 'up-anthropic-secret-0002' }
export const FIRST_BYTE_MS = 400
/** The `raw` channel gives up on a stream silent for this long. */
export const IDLE_MS = 600
/** USD per million tokens: 1 in, 2 out, so every answer costs a few micro-dollars and a failure costs 0. */
export const PRICE = { input_per_mtok: 1, output_per_mtok: 2 }

export type Proto = 'chat' | 'messages'
export const ENDPOINT: Record<Proto, string> = { chat: '/v1/chat/completions', messages: '/v1/messages' }

export type Rig = {
	app: TestApp
	primary: VendorMock
	fallback: VendorMock
	/** What the hand-written upstream behind model `raw` answers (faults the mocks cannot make). */
	raw: { reply: (req: Request) => Response | Promise<Response> }
	close(): Promise<void>
}

export async function startRig(env: Record<string, string> = {}): Promise<Rig> {
	const primary = await startOpenAIMock({ apiKey: UP_KEY.openai })
	const fallback = await startAnthropicMock({ apiKey: UP_KEY.anthropic })
	const raw: Rig['raw'] = { reply: () => new Response('not set', { status: 500 }) }
	const rawServer = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: (req) => raw.reply(req) })
	const timeouts = { timeouts: { first_byte_ms: FIRST_BYTE_MS } }
	const app = await startTestApp({
		env,
		config: {
			channels: [
				{ name: 'pri', type: 'openai', base_url: primary.url, api_key: UP_KEY.openai, models: ['dual'], model_map: { dual: 'gpt-4o-mini' }, priority: 0, settings: timeouts },
				{ name: 'fallback', type: 'anthropic', base_url: fallback.url, api_key: UP_KEY.anthropic, models: ['dual'], model_map: { dual: 'claude-sonnet-5' }, priority: 1 },
				{ name: 'solo', type: 'openai', base_url: primary.url, api_key: UP_KEY.openai, models: ['solo'], model_map: { solo: 'gpt-4o-mini' }, settings: timeouts },
				{ name: 'raw', type: 'openai', base_url: `http://127.0.0.1:${rawServer.port}/v1`, api_key: UP_KEY.openai, models: ['raw'], settings: { timeouts: { first_byte_ms: FIRST_BYTE_MS, idle_ms: IDLE_MS } } },
			],
			models: [
				{ name: 'dual', ...PRICE },
				{ name: 'solo', ...PRICE },
				{ name: 'raw', ...PRICE },
			],
		},
	})
	return {
		app,
		primary,
		fallback,
		raw,
		async close() {
			await app.close()
			await primary.stop()
			await fallback.stop()
			await rawServer.stop(true)
		},
	}
}

/** A body both protocols accept (Anthropic requires max_tokens; OpenAI takes it too). */
export function body(model: string, text: string, stream: boolean, maxTokens = 100): Record<string, unknown> {
	return { model, messages: [{ role: 'user', content: text }], max_tokens: maxTokens, ...(stream && { stream: true }) }
}

/** Auth as each protocol's SDK sends it. */
export const auth = (proto: Proto, key: string): Record<string, string> =>
	proto === 'chat' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key, 'anthropic-version': '2023-06-01' }

export type Answer = { status: number; headers: Headers; text: string; json: any }

/** POSTs and reads the whole answer (a stream to its end). */
export async function post(url: string, proto: Proto, key: string, b: unknown, headers: Record<string, string> = {}): Promise<Answer> {
	return readAnswer(await fetch(url + ENDPOINT[proto], { method: 'POST', headers: { 'content-type': 'application/json', ...auth(proto, key), ...headers }, body: JSON.stringify(b) }))
}

/** SSE `data:` payloads of a stream body, in order. */
export function sseData(text: string): string[] {
	return text
		.split('\n')
		.filter((l) => l.startsWith('data:'))
		.map((l) => l.slice(5).trim())
}

/** The answer text of a stream or a JSON body, in either protocol. */
export function answerText(proto: Proto, a: Answer): string {
	if (a.json) return proto === 'chat' ? (a.json.choices?.[0]?.message?.content ?? '') : (a.json.content ?? []).map((c: { text?: string }) => c.text ?? '').join('')
	let out = ''
	for (const d of sseData(a.text)) {
		if (d === '[DONE]') continue
		const j = JSON.parse(d)
		out += proto === 'chat' ? (j.choices?.[0]?.delta?.content ?? '') : j.type === 'content_block_delta' ? (j.delta?.text ?? '') : ''
	}
	return out
}

/** The error in the caller's protocol shape (throws when the body is not one). */
export function errorOf(proto: Proto, json: any): { type: string; message: string } {
	if (proto === 'chat') {
		if (typeof json?.error?.message !== 'string' || typeof json.error.type !== 'string') throw new Error(`not an OpenAI error body: ${JSON.stringify(json)}`)
		return json.error
	}
	if (json?.type !== 'error' || typeof json.error?.type !== 'string' || typeof json.error.message !== 'string') throw new Error(`not an Anthropic error body: ${JSON.stringify(json)}`)
	return json.error
}

/** Usage rows of one request id (the ledger flushed first: it writes them in batches). */
export async function usageOf(app: TestApp, requestId: string) {
	await app.svc.ledger.flush()
	return app.svc.db.sql.query<{ cost: number; status: number; channel: string | null; end_reason: string; output_tokens: number }>(
		'SELECT cost, status, channel, end_reason, output_tokens FROM usage_logs WHERE request_id = $1 ORDER BY id',
		[requestId],
	)
}

/** The account's available balance in micro-USD (leased but unused money counts), from the database after a flush. */
export async function balanceOf(app: TestApp, accountId: number): Promise<number> {
	await app.svc.ledger.flush()
	const [r] = await app.svc.db.sql.query<{ balance: number }>(AVAILABLE_BALANCE_SQL, [accountId])
	return r!.balance
}

/** A metric's value from GET /metrics text (0 when absent), matching every given label. */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
	let sum = 0
	for (const line of text.split('\n')) {
		if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
		if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue
		sum += Number(line.slice(line.lastIndexOf(' ') + 1))
	}
	return sum
}
