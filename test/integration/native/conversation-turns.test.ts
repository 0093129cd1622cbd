/**
 * A turn of a conversation kept by the gateway, as the client sees it: the Response object names its conversation
 * (`conversation: {id}`, as OpenAI's does; it said `null`) in the JSON answer, on the stream's lifecycle events and on
 * retrieval, for converted and OpenAI models; and one turn at a time per conversation: a second turn sent while one
 * runs gets OpenAI's 400 `conversation_locked` rather than reading the conversation without the first turn's items.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { lastRequest, type Native, SETUP_MS, startNative, usageRows, refused } from './setup'

let n: Native
beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)
afterAll(() => n.close())

const client = async (balance = 10) => {
	const a = await n.app.account(balance)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1`, maxRetries: 0 }) }
}
const LIFECYCLE = ['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']

/** The frames of an SSE body as text blocks (comments included), and their parsed events. */
function framesOf(text: string): Array<{ block: string; event?: string; data?: any }> {
	return text
		.split('\n\n')
		.filter((b) => b.trim())
		.map((block) => {
			const event = /^event: (.*)$/m.exec(block)?.[1]
			const data = /^data: (.*)$/m.exec(block)?.[1]
			return { block, event, data: data === undefined ? undefined : JSON.parse(data) }
		})
}

const rawTurn = (key: string, body: Record<string, unknown>) =>
	fetch(`${n.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe('the Response object of a conversation turn', () => {
	for (const model of ['claude-sonnet-5', 'gpt-4o-mini'])
		for (const stream of [false, true])
			it(`should name its conversation (${model}, ${stream ? 'streamed' : 'not streamed'}), also when retrieved`, async () => {
				const a = await client()
				const conv = await a.openai.conversations.create()
				// The mock's ids follow the input: one of its own per test, so each response id is this account's.
				const input = `hello ${model} ${stream}`
				let r: OpenAI.Responses.Response
				if (stream) {
					const s = a.openai.responses.stream({ model, input, conversation: conv.id })
					const seen: Array<[string, unknown]> = []
					for await (const e of s) if (LIFECYCLE.includes(e.type)) seen.push([e.type, (e as { response: { conversation?: unknown } }).response.conversation])
					expect(seen).toEqual([
						['response.created', { id: conv.id }],
						['response.in_progress', { id: conv.id }],
						['response.completed', { id: conv.id }],
					])
					r = await s.finalResponse()
				} else r = await a.openai.responses.create({ model, input, conversation: conv.id })
				expect(r.conversation).toEqual({ id: conv.id })
				expect(r.output_text).toBe(`Hello! You said: ${input}`)
				expect((await a.openai.responses.retrieve(r.id)).conversation).toEqual({ id: conv.id })
				// A response that is no turn of a conversation says so.
				const plain = await a.openai.responses.create({ model, input: `no conversation ${input}` })
				expect(plain.conversation ?? null).toBeNull()
				expect((await a.openai.responses.retrieve(plain.id)).conversation ?? null).toBeNull()
			})

	it('should name it on response.incomplete too', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		for (const model of ['claude-sonnet-5', 'gpt-4o-mini']) {
			const s = a.openai.responses.stream({ model, input: 'say a lot #length', max_output_tokens: 16, conversation: conv.id })
			const ends: unknown[] = []
			for await (const e of s) if (e.type === 'response.incomplete') ends.push(e.response.conversation)
			expect(ends).toEqual([{ id: conv.id }])
		}
	})

	it("should list a converted turn's input items under the ids the conversation lists them by", async () => {
		const a = await client()
		const conv = await a.openai.conversations.create({ items: [{ role: 'user', content: 'kept before the turns' }] })
		const first = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'first turn', conversation: conv.id })
		const second = await a.openai.responses.create({
			model: 'claude-sonnet-5',
			input: [{ role: 'user', content: 'second turn' }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and more' }] }],
			conversation: conv.id,
		})
		const held: Array<{ id: string; text: string }> = []
		const textOf = (x: any) => x.content.map((p: { text?: string }) => p.text).join('')
		for await (const it of a.openai.conversations.items.list(conv.id, { order: 'asc' })) held.push({ id: it.id!, text: textOf(it) })
		expect(held.map((h) => h.text)).toEqual(['kept before the turns', 'first turn', 'Hello! You said: kept before the turns first turn', 'second turn', 'and more', 'Hello! You said: second turn and more'])
		// Each response's input items: the conversation as the turn read it (OpenAI lists newest first), the same ids.
		const inputOf = async (id: string) => {
			const out: Array<{ id: string; text: string }> = []
			for await (const it of a.openai.responses.inputItems.list(id, { order: 'asc' })) out.push({ id: it.id!, text: textOf(it) })
			return out
		}
		expect(await inputOf(first.id)).toEqual(held.slice(0, 2))
		expect(await inputOf(second.id)).toEqual(held.slice(0, 5))
		expect(held.slice(2, 3).map((h) => h.id)).toEqual([first.output[0]!.id!])
	})

	it('should leave every other frame of an OpenAI stream as the upstream sent it', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		// An empty conversation: the upstream gets the same input both times, so it answers the same frames but for the
		// ids it gives each response and item (its own each time, as OpenAI's).
		const body = { model: 'gpt-4o-mini', input: 'same words here', stream: true }
		const bare = framesOf(await (await rawTurn(a.key, body)).text())
		const turn = framesOf(await (await rawTurn(a.key, { ...body, conversation: conv.id })).text())
		expect(turn.length).toBe(bare.length)
		const sameIds = (text: string) => text.replace(/\b(msg|rs|resp)_[a-z0-9]+/g, '$1_ID')
		const others = (fs: typeof bare) => fs.filter((f) => !LIFECYCLE.includes(f.event ?? '')).map((f) => sameIds(f.block))
		expect(others(turn)).toEqual(others(bare))
		expect(others(turn).some((b) => b.includes('response.output_text.delta'))).toBe(true)
		for (const f of turn.filter((f) => LIFECYCLE.includes(f.event ?? ''))) expect(f.data.response.conversation).toEqual({ id: conv.id })
		const bareLife = bare.filter((f) => LIFECYCLE.includes(f.event ?? ''))
		// `created_at` is the second each upstream call began in: the two calls may straddle one.
		const life = (r: Record<string, unknown>) => JSON.parse(sameIds(JSON.stringify({ ...r, conversation: null, created_at: typeof r.created_at })))
		turn.filter((f) => LIFECYCLE.includes(f.event ?? '')).forEach((f, i) => expect(life(f.data.response)).toEqual(life(bareLife[i]!.data.response)))
	})
})

/** Waits until the mock has received `count` requests. */
async function received(mock: { requests: unknown[] }, count: number) {
	for (let i = 0; i < 250 && mock.requests.length < count; i++) await Bun.sleep(20)
	expect(mock.requests.length).toBeGreaterThanOrEqual(count)
}

describe('two turns on one conversation at once', () => {
	it("should refuse the second with OpenAI's 400 conversation_locked while the first runs, before any upstream call", async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		const before = n.anthropic.requests.length
		n.openai.faultOnce = { kind: 'slow', firstByteMs: 600 }
		const first = a.openai.responses.create({ model: 'gpt-4o-mini', input: 'first turn', conversation: conv.id })
		await received(n.openai, n.openai.requests.length + 1)
		for (const stream of [false, true]) {
			const err = await refused(
				stream
					? a.openai.responses.stream({ model: 'claude-sonnet-5', input: 'second turn', conversation: conv.id }).finalResponse()
					: a.openai.responses.create({ model: 'claude-sonnet-5', input: 'second turn', conversation: conv.id }),
			)
			expect(err?.status).toBe(400)
			expect(err!.error).toMatchObject({ type: 'invalid_request_error', code: 'conversation_locked', param: 'conversation' })
			expect(err!.message).toContain('Another process is currently operating on this conversation. Please retry in a few seconds.')
		}
		expect(n.anthropic.requests.length).toBe(before)
		expect((await first).output_text).toBe('Hello! You said: first turn')
		// Once the first has answered, the next turn goes, and reads the first turn's items.
		const next = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'second turn', conversation: conv.id })
		expect(next.output_text).toBe('Hello! You said: second turn')
		const messages = (lastRequest(n.anthropic).body as { messages: Array<{ role: string }> }).messages
		expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
		expect((await usageRows(n.app, a.accountId)).length).toBe(2)
	})

	it('should free the conversation when the streamed turn holding it ends, completed or cut by the client', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		// The turn's stream is read to its end: the next turn may go as soon as the client has it.
		const done = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'one', conversation: conv.id }).finalResponse()
		expect(done.status).toBe('completed')
		await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'two', conversation: conv.id })
		// A stream the upstream stalls holds the conversation until the client leaves.
		n.openai.faultOnce = { kind: 'stall', afterChunks: 3 }
		const res = await rawTurn(a.key, { model: 'gpt-4o-mini', input: 'three', conversation: conv.id, stream: true })
		const reader = res.body!.getReader()
		await reader.read()
		const err = await refused(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'four', conversation: conv.id }))
		expect(err?.error).toMatchObject({ code: 'conversation_locked' })
		await reader.cancel()
		let next: OpenAI.Responses.Response | undefined
		for (let i = 0; i < 100 && !next; i++) {
			next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'four', conversation: conv.id }).catch(() => undefined)
			if (!next) await Bun.sleep(20)
		}
		expect(next?.output_text).toBe('Hello! You said: four')
		// The cut turn appended nothing.
		const items = (await a.openai.conversations.items.list(conv.id, { order: 'asc', limit: 100 })).data
		expect(items.length).toBe(6)
	})

	it('should free the conversation at once when the turn fails before it is answered', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		const unknown = await refused(a.openai.responses.create({ model: 'no-such-model', input: 'x', conversation: conv.id }))
		expect(unknown?.status).toBe(404)
		n.openai.faultOnce = { kind: 'status', status: 400 }
		const upstream400 = await refused(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', conversation: conv.id }))
		expect(upstream400?.status).toBe(400)
		expect(upstream400!.error).not.toMatchObject({ code: 'conversation_locked' })
		const ok = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'now it goes', conversation: conv.id })
		expect(ok.output_text).toBe('Hello! You said: now it goes')
	})

	it('should let a turn go once a hold left by a vanished instance has lapsed, and not before', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		const sql = n.app.svc.db.sql
		await sql.query(`UPDATE conversations SET busy_by = 'gone', busy_until = now() + interval '1 minute' WHERE id = $1`, [conv.id])
		const err = await refused(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', conversation: conv.id }))
		expect(err?.error).toMatchObject({ code: 'conversation_locked' })
		await sql.query(`UPDATE conversations SET busy_until = now() - interval '1 second' WHERE id = $1`, [conv.id])
		const ok = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'after the lapse', conversation: conv.id })
		expect(ok.output_text).toBe('Hello! You said: after the lapse')
		const [row] = await sql.query<{ busy_by: string | null }>('SELECT busy_by FROM conversations WHERE id = $1', [conv.id])
		expect(row!.busy_by).toBeNull()
	})
})
