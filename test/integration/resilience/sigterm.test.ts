/**
 * SIGTERM (issue 4): a real server process with slow streams in flight stops accepting connections at once, lets the
 * open streams finish (OpenAI ends with [DONE], Anthropic with message_stop), writes their usage rows and exits 0.
 * When the grace period (SHUTDOWN_GRACE_MS) runs out first, the streams still open end with their protocol's error
 * event (not a bare connection reset), and what they used is still billed before the process exits: no hold is left open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from './invariant'
import { auth, body, ENDPOINT, type Proto } from './rig'
import { deploy, type Deployment, readFrames, type Server } from './server-process'

let mock: VendorMock
let anthropic: VendorMock
let dep: Deployment

/** An images upstream streaming a partial preview every 200 ms, for 10 s (OpenAI's image streaming events). */
const images = Bun.serve({
	hostname: '127.0.0.1',
	port: 0,
	idleTimeout: 0,
	fetch() {
		let n = 0
		let timer: ReturnType<typeof setInterval> | undefined
		const body = new ReadableStream<string>({
			start(ctl) {
				timer = setInterval(() => {
					const ev = { type: 'image_generation.partial_image', b64_json: 'AAAA', partial_image_index: n, created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' }
					ctl.enqueue(`event: image_generation.partial_image\ndata: ${JSON.stringify(ev)}\n\n`)
					if (++n === 50) clearInterval(timer)
				}, 200)
			},
			cancel: () => clearInterval(timer),
		})
		return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
	},
})

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-term-key', chunkDelayMs: 200, record: false })
	anthropic = await startAnthropicMock({ apiKey: 'up-term-anthropic', chunkDelayMs: 200, record: false })
	dep = await deploy({
		channels: [
			{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-term-key', models: ['term'], model_map: { term: 'gpt-4o-mini' } },
			{ name: 'img', type: 'openai', base_url: `http://127.0.0.1:${images.port}/v1`, api_key: 'up-img-key', models: ['gpt-image-1'] },
			{ name: 'claude', type: 'anthropic', base_url: anthropic.url, api_key: 'up-term-anthropic', models: ['term-claude'], model_map: { 'term-claude': 'claude-sonnet-4-6' } },
		],
		models: [
			{ name: 'term', input_per_mtok: 100, output_per_mtok: 200 },
			{ name: 'term-claude', input_per_mtok: 100, output_per_mtok: 200 },
			{ name: 'gpt-image-1', input_per_mtok: 5, output_per_mtok: 40 },
		],
	})
}, 60_000)
afterAll(async () => {
	await dep.close()
	await mock.stop()
	await anthropic.stop()
	images.stop(true)
})

/** About 12 chunks at 200 ms: a 2–3 s stream. */
const PROMPT = 'tell me a slow story about the sea and ships'
/** Four times as long: the streams opened one after another are all still running when the grace period ends. */
const LONG = Array(4).fill(PROMPT).join(' ')

async function openStream(server: Server, key: string, proto: Proto, requestId: string) {
	const res = await fetch(server.url + ENDPOINT[proto], {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...auth(proto, key) },
		body: JSON.stringify(body('term', PROMPT, true, 100)),
	})
	expect(res.status).toBe(200)
	return readFrames(res, 3)
}

/** Whether a new TCP connection to the server is refused (a fetch could reuse a pooled keep-alive connection). */
async function refusesConnections(server: Server): Promise<boolean> {
	const port = Number(new URL(server.url).port)
	for (let i = 0; i < 40; i++) {
		try {
			const sock = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
			sock.end()
		} catch {
			return true
		}
		await Bun.sleep(50)
	}
	return false
}

describe('SIGTERM', () => {
	it('should refuse new connections, finish the open streams, bill them and exit 0', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '20000' })
		const acct = await dep.admin(s, '/api/accounts', { name: 'term', balance: 5 })
		const tok = await dep.admin(s, '/api/tokens', { account_id: acct.id, name: 'k' })
		const chat = await openStream(s, tok.key, 'chat', 'term-chat')
		const messages = await openStream(s, tok.key, 'messages', 'term-messages')
		s.proc.kill('SIGTERM')
		expect(await refusesConnections(s)).toBe(true)
		expect(s.running()).toBe(true) // still draining

		const chatText = chat.text + (await chat.rest())
		expect(chatText.trimEnd().endsWith('data: [DONE]')).toBe(true)
		expect(chatText).toContain(' ships')
		const messagesText = messages.text + (await messages.rest())
		expect(messagesText).toContain('event: message_stop')
		expect(await s.exited).toBe(0)
		expect(s.output()).toContain('"msg":"shutting down"')

		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; status: number; end_reason: string; cost: number }>('SELECT request_id, status, end_reason, cost FROM usage_logs ORDER BY request_id'))
		expect(rows.map((r) => [r.request_id, r.status, r.end_reason])).toEqual([
			['term-chat', 200, 'ok'],
			['term-messages', 200, 'ok'],
		])
		expect(rows.every((r) => r.cost > 0)).toBe(true)
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)

	it('should bill the streams it cuts when the grace period runs out, record them as shutdown, and still exit 0', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '400' })
		const tok = (await dep.admin(s, '/api/tokens')).data[0] as { id: number }
		const key = (await dep.admin(s, `/api/tokens/${tok.id}/key`)).key as string
		// A client that leaves on its own before the shutdown: still its own doing (client_abort).
		const leaving = new AbortController()
		const left = await fetch(s.url + ENDPOINT.chat, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-request-id': 'cut-left', ...auth('chat', key) },
			body: JSON.stringify(body('term', PROMPT, true, 100)),
			signal: leaving.signal,
		})
		await readFrames(left, 3)
		leaving.abort()
		await Bun.sleep(300)
		const chat = await openStream(s, key, 'chat', 'cut-chat')
		const messages = await openStream(s, key, 'messages', 'cut-messages')
		s.proc.kill('SIGTERM')
		// Each stream ends (its body complete, not reset) with its protocol's error event: an OpenAI error chunk, and
		// Anthropic's `event: error` with overloaded_error (retryable), as for other failures midway.
		const reset = (e: unknown) => `reset: ${e}`
		const [chatRest, messagesRest] = await Promise.all([chat.rest().catch(reset), messages.rest().catch(reset)])
		expect(await s.exited).toBe(0)
		expect(chatRest).not.toContain('reset:')
		expect(chatRest).not.toContain('[DONE]')
		const chatLast = JSON.parse(chatRest.trimEnd().split('\n').at(-1)!.slice('data: '.length))
		expect(chatLast).toMatchObject({ error: { type: 'service_unavailable_error', code: 'shutting_down' } })
		expect(messagesRest).not.toContain('reset:')
		expect(messagesRest).not.toContain('message_stop')
		expect(messagesRest.trimEnd()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"overloaded_error","message":"[^"]+"\}[^\n]*\}$/)
		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; end_reason: string; cost: number }>(`SELECT request_id, end_reason, cost FROM usage_logs WHERE request_id LIKE 'cut-%' ORDER BY request_id`))
		// QA operator report: the streams the gateway cut were recorded as client_abort, as if their clients had left.
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual([
			['cut-chat', 'shutdown'],
			['cut-left', 'client_abort'],
			['cut-messages', 'shutdown'],
		])
		expect(rows.every((r) => r.cost > 0)).toBe(true)
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)

	it('should end the /v1/responses streams it cuts with the Responses error event: native, converted, a conversation turn', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '400' })
		const acct = await dep.admin(s, '/api/accounts', { name: 'term-responses', balance: 5 })
		const key = (await dep.admin(s, '/api/tokens', { account_id: acct.id, name: 'k' })).key as string
		const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` }
		const conversation = (await (await fetch(s.url + '/v1/conversations', { method: 'POST', headers, body: '{}' })).json()) as { id: string }
		const open = async (requestId: string, payload: object) => {
			const res = await fetch(s.url + '/v1/responses', { method: 'POST', headers: { ...headers, 'x-request-id': requestId }, body: JSON.stringify({ input: LONG, max_output_tokens: 200, stream: true, ...payload }) })
			expect(res.status).toBe(200)
			return readFrames(res, 3)
		}
		// Stored (the default), so the route holds the stream's end for the converted answer's copy (kept-first.ts), and the
		// turn's for its conversation (conversations/turn.ts): the error event passes through those streams too.
		const streams = {
			'cut-responses-converted': await open('cut-responses-converted', { model: 'term-claude' }),
			'cut-responses-native': await open('cut-responses-native', { model: 'term' }),
			'cut-responses-turn': await open('cut-responses-turn', { model: 'term', conversation: conversation.id }),
		}
		s.proc.kill('SIGTERM')
		const reset = (e: unknown) => `reset: ${e}`
		const rests = await Promise.all(Object.values(streams).map((st) => st.rest().catch(reset)))
		expect(await s.exited).toBe(0)
		// QA: these got ECONNRESET after a plain `response.output_text.delta`, where chat got its `shutting_down` chunk.
		// The Responses API's `error` event, as a stream failing midway ends (https://platform.openai.com/docs/api-reference/responses-streaming/error).
		for (const rest of rests) {
			expect(rest).not.toContain('reset:')
			expect(rest).not.toContain('response.completed')
			const last = rest.trimEnd().split('\n\n').at(-1)!
			expect(last).toStartWith('event: error\ndata: ')
			expect(JSON.parse(last.slice('event: error\ndata: '.length))).toMatchObject({ type: 'error', code: 'shutting_down', message: 'The gateway is restarting: this answer was cut short. Retry the request.' })
		}
		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; end_reason: string }>(`SELECT request_id, end_reason FROM usage_logs WHERE request_id LIKE 'cut-responses-%' ORDER BY request_id`))
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual(Object.keys(streams).map((id) => [id, 'shutdown']))
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)

	it('should end the other event streams it cuts with their own error events: images, a followed background interaction', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '400' })
		const acct = await dep.admin(s, '/api/accounts', { name: 'term-others', balance: 5 })
		const key = (await dep.admin(s, '/api/tokens', { account_id: acct.id, name: 'k' })).key as string
		const open = async (path: string, requestId: string, headers: Record<string, string>, payload: object) => {
			const res = await fetch(s.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...headers }, body: JSON.stringify(payload) })
			expect(res.status).toBe(200)
			return readFrames(res, 2)
		}
		const image = await open('/v1/images/generations', 'cut-images', { authorization: `Bearer ${key}` }, { model: 'gpt-image-1', prompt: 'a slow fox', stream: true, partial_images: 3 })
		const interaction = await open('/v1beta/interactions', 'cut-interaction', { 'x-goog-api-key': key }, { model: 'term', input: PROMPT, background: true, stream: true })
		s.proc.kill('SIGTERM')
		const reset = (e: unknown) => `reset: ${e}`
		const [imageRest, interactionRest] = await Promise.all([image.rest().catch(reset), interaction.rest().catch(reset)])
		expect(await s.exited).toBe(0)
		// The images API's error event (https://platform.openai.com/docs/api-reference/images-streaming), a retryable 503's type.
		expect(imageRest).not.toContain('reset:')
		expect(imageRest.trimEnd()).toEndWith(
			`event: error\ndata: ${JSON.stringify({ type: 'error', error: { message: 'The gateway is restarting: this answer was cut short. Retry the request.', type: 'service_unavailable_error', param: null, code: 'shutting_down' } })}`,
		)
		// The Interactions `error` event, with no interaction.completed or end marker before it.
		expect(interactionRest).not.toContain('reset:')
		expect(interactionRest).not.toContain('interaction.completed')
		const last = interactionRest.trimEnd().split('\n\n').at(-1)!
		expect(last).toStartWith('event: error\ndata: ')
		expect(JSON.parse(last.slice('event: error\ndata: '.length))).toMatchObject({ event_type: 'error', error: { code: 'UNAVAILABLE' } })
		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; end_reason: string }>(`SELECT request_id, end_reason FROM usage_logs WHERE request_id IN ('cut-images', 'cut-interaction') ORDER BY request_id`))
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual([
			['cut-images', 'shutdown'],
			['cut-interaction', 'shutdown'],
		])
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)
})
