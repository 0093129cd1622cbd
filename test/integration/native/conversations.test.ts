/**
 * OpenAI's Conversations API, kept by the gateway for every model: the conversation routes through the official
 * `openai` SDK (`conversations.*`, `conversations.items.*`), and `responses.create({ conversation })` on Claude,
 * Gemini and OpenAI models, streamed and not, with the upstream seeing the earlier turns as plain input.
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
const upstreamCalls = () => n.openai.requests.length + n.anthropic.requests.length + n.gemini.requests.length

/** The texts of a conversation item list's messages, as `role: text`. */
const texts = (items: Array<{ type: string; role?: string; content?: Array<{ text?: string }> }>) =>
	items.filter((i) => i.type === 'message').map((i) => `${i.role}: ${(i.content ?? []).map((c) => c.text).join('')}`)

describe('the conversation routes', () => {
	it('should create, retrieve, update and delete a conversation', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create({ metadata: { topic: 'demo' }, items: [{ type: 'message', role: 'user', content: 'Hello!' }] })
		expect(conv.id).toStartWith('conv_')
		expect(conv).toMatchObject({ object: 'conversation', metadata: { topic: 'demo' } })
		expect(Math.abs(conv.created_at - Date.now() / 1000)).toBeLessThan(60)
		expect(await a.openai.conversations.retrieve(conv.id)).toEqual(conv)

		const updated = await a.openai.conversations.update(conv.id, { metadata: { topic: 'changed', user: 'u1' } })
		expect(updated).toMatchObject({ id: conv.id, metadata: { topic: 'changed', user: 'u1' } })
		expect((await a.openai.conversations.retrieve(conv.id)).metadata).toEqual({ topic: 'changed', user: 'u1' })

		const empty = await a.openai.conversations.create()
		expect(empty.metadata).toEqual({})
		expect((await a.openai.conversations.items.list(empty.id)).data).toEqual([])

		expect(await a.openai.conversations.delete(conv.id)).toEqual({ id: conv.id, object: 'conversation.deleted', deleted: true })
		const err = await refused(a.openai.conversations.retrieve(conv.id))
		expect(err!.status).toBe(404)
		expect(err!.error).toMatchObject({ type: 'invalid_request_error', code: 'conversation_not_found' })
		expect(err!.message).toContain(`Conversation with id '${conv.id}' not found.`)
	})

	it('should add, list (paged, both orders), retrieve and delete items', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create({
			items: [
				{ type: 'message', role: 'developer', content: 'Be brief.' },
				{ role: 'user', content: 'one' },
			],
		})
		const added = await a.openai.conversations.items.create(conv.id, {
			items: [
				{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'two', annotations: [] }], id: 'msg_client_given', status: 'completed' },
				{ role: 'user', content: [{ type: 'input_text', text: 'three' }] },
			],
		})
		expect(added.object).toBe('list')
		expect(added.data.map((i) => i.id)).toEqual(['msg_client_given', added.data[1]!.id])
		expect(added.data[1]!.id).toStartWith('msg_')
		expect(added).toMatchObject({ first_id: 'msg_client_given', last_id: added.data[1]!.id, has_more: false })

		// Newest first by default, as OpenAI lists them.
		const desc = await a.openai.conversations.items.list(conv.id)
		expect(texts(desc.data as never)).toEqual(['user: three', 'assistant: two', 'user: one', 'developer: Be brief.'])
		expect(desc.data[0]).toMatchObject({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'three' }] })
		const asc = await a.openai.conversations.items.list(conv.id, { order: 'asc' })
		expect(texts(asc.data as never)).toEqual(['developer: Be brief.', 'user: one', 'assistant: two', 'user: three'])

		// Pages of one: the SDK follows `last_id` while `has_more`.
		const first = await a.openai.conversations.items.list(conv.id, { order: 'asc', limit: 1 })
		expect(first.data.length).toBe(1)
		expect(first.has_more).toBe(true)
		const all: string[] = []
		for await (const item of a.openai.conversations.items.list(conv.id, { order: 'asc', limit: 1 })) all.push(item.id!)
		expect(all).toEqual(asc.data.map((i) => i.id!))
		const page2 = await a.openai.conversations.items.list(conv.id, { order: 'desc', limit: 2, after: desc.data[1]!.id })
		expect(page2.data.map((i) => i.id)).toEqual([desc.data[2]!.id, desc.data[3]!.id])
		expect(page2.has_more).toBe(false)

		const one = await a.openai.conversations.items.retrieve('msg_client_given', { conversation_id: conv.id })
		expect(one).toMatchObject({ id: 'msg_client_given', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'two' }] })
		const after = await a.openai.conversations.items.delete('msg_client_given', { conversation_id: conv.id })
		expect(after).toMatchObject({ id: conv.id, object: 'conversation' })
		expect(texts((await a.openai.conversations.items.list(conv.id, { order: 'asc' })).data as never)).toEqual(['developer: Be brief.', 'user: one', 'user: three'])
		const gone = await refused(a.openai.conversations.items.retrieve('msg_client_given', { conversation_id: conv.id }))
		expect(gone!.status).toBe(404)
		expect(gone!.error).toMatchObject({ code: 'item_not_found' })
	})

	it('should refuse more than 20 items, a duplicate item id and bad metadata with 400', async () => {
		const a = await client()
		const many = Array.from({ length: 21 }, (_, i) => ({ role: 'user' as const, content: `m${i}` }))
		expect((await refused(a.openai.conversations.create({ items: many })))!.status).toBe(400)
		const conv = await a.openai.conversations.create({ items: many.slice(0, 20) })
		expect((await a.openai.conversations.items.list(conv.id, { limit: 100 })).data.length).toBe(20)
		const dup = { type: 'message' as const, role: 'assistant' as const, id: 'msg_same', status: 'completed' as const, content: [{ type: 'output_text' as const, text: 'x', annotations: [] }] }
		await a.openai.conversations.items.create(conv.id, { items: [dup] })
		const err = await refused(a.openai.conversations.items.create(conv.id, { items: [dup] }))
		expect(err!.status).toBe(400)
		expect(err!.error).toMatchObject({ code: 'duplicate_item' })
		const meta = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']))
		expect((await refused(a.openai.conversations.update(conv.id, { metadata: meta })))!.status).toBe(400)
	})

	it('should refuse an item_reference with 400 naming it, on create and on adding items, and add nothing (QA: a 500, or dropped)', async () => {
		const a = await client()
		const ref = { type: 'item_reference' as const, id: 'msg_elsewhere' }
		const message = { type: 'message' as const, role: 'user' as const, content: 'kept?' }
		const conv = await a.openai.conversations.create({ items: [message] })
		for (const items of [[ref], [message, ref]]) {
			const err = await refused(a.openai.conversations.items.create(conv.id, { items }))
			expect(err!.status).toBe(400)
			expect(err!.error).toMatchObject({ type: 'invalid_request_error', param: `items[${items.indexOf(ref)}]` })
			expect(err!.message).toContain('send the item itself')
		}
		expect(texts((await a.openai.conversations.items.list(conv.id)).data as never)).toEqual(['user: kept?'])
		const created = await refused(a.openai.conversations.create({ items: [ref] }))
		expect(created!.status).toBe(400)
		expect(created!.error).toMatchObject({ param: 'items[0]' })
	})

	it('should refuse an item POST /v1/responses would refuse, naming items[i], and add nothing (QA: kept, every later turn failed)', async () => {
		const a = await client()
		const message = { type: 'message' as const, role: 'user' as const, content: 'kept?' }
		const conv = await a.openai.conversations.create({ items: [message] })
		const bad: Array<[unknown, string, string]> = [
			[{ type: 'bogus' }, 'type', 'invalid_value'],
			[{ type: 'message', role: 'user' }, 'content', 'missing_required_parameter'],
			[{ type: 'function_call_output', output: 'x' }, 'call_id', 'missing_required_parameter'],
			[{ type: 'function_call', call_id: 'c1', name: 'f' }, 'arguments', 'missing_required_parameter'],
			[{ type: 'message', role: 'wizard', content: 'hi' }, 'role', 'invalid_value'],
			[{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 5 }] }, 'content[0].text', 'invalid_request_error'],
		]
		for (const [item, field, code] of bad) {
			const created = await refused(a.openai.conversations.create({ items: [item as never] }))
			expect([item, created?.status, created?.param, created?.code]).toEqual([item, 400, `items[0].${field}`, code])
			const added = await refused(a.openai.conversations.items.create(conv.id, { items: [message, item as never] }))
			expect([item, added?.status, added?.param, added?.code]).toEqual([item, 400, `items[1].${field}`, code])
		}
		expect(texts((await a.openai.conversations.items.list(conv.id)).data as never)).toEqual(['user: kept?'])
		// The conversation still serves a turn on every model.
		for (const model of ['claude-sonnet-5', 'gemini-2.5-flash', 'gpt-4o-mini']) expect((await a.openai.responses.create({ model, conversation: conv.id, input: 'hello' })).status).toBe('completed')
	})

	it("should answer 404 for another account's conversation on every route, and in responses.create", async () => {
		const a = await client()
		const b = await client()
		const conv = await a.openai.conversations.create({ items: [{ role: 'user', content: 'secret of account a' }] })
		const item = (await a.openai.conversations.items.list(conv.id)).data[0]!
		const calls = [
			b.openai.conversations.retrieve(conv.id),
			b.openai.conversations.update(conv.id, { metadata: { x: 'y' } }),
			b.openai.conversations.delete(conv.id),
			b.openai.conversations.items.list(conv.id),
			b.openai.conversations.items.create(conv.id, { items: [{ role: 'user', content: 'x' }] }),
			b.openai.conversations.items.retrieve(item.id!, { conversation_id: conv.id }),
			b.openai.conversations.items.delete(item.id!, { conversation_id: conv.id }),
		]
		for (const err of await Promise.all(calls.map(refused))) {
			expect(err!.status).toBe(404)
			expect(err!.error).toMatchObject({ type: 'invalid_request_error', code: 'conversation_not_found' })
		}
		const before = upstreamCalls()
		for (const model of ['claude-sonnet-5', 'gpt-4o-mini']) {
			const err = await refused(b.openai.responses.create({ model, input: 'what did a say?', conversation: conv.id }))
			expect(err!.status).toBe(404)
			expect(err!.error).toMatchObject({ code: 'conversation_not_found', param: 'conversation' })
		}
		expect(upstreamCalls()).toBe(before)
		expect(await usageRows(n.app, b.accountId)).toEqual([])
		// A's conversation is as it was.
		expect(texts((await a.openai.conversations.items.list(conv.id)).data as never)).toEqual(['user: secret of account a'])
		expect((await a.openai.conversations.retrieve(conv.id)).metadata).toEqual({})
	})

	it('should refuse a body that is not JSON (a form, XML, bytes) with 415, creating nothing', async () => {
		// Elysia reads a form, and application/xml as one too, into an object that this schema (no required field) took.
		const a = await client()
		for (const [type, body] of [
			['application/xml', '<items/>'],
			['application/x-www-form-urlencoded', 'a=b&c=d'],
			['application/octet-stream', 'zz'],
		]) {
			for (const path of ['/v1/conversations', '/v1/conversations/conv_none/items']) {
				const res = await fetch(`${n.app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': type! }, body })
				expect({ type, path, status: res.status }).toEqual({ type, path, status: 415 })
				expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' })
			}
		}
		const [{ count }] = await n.app.svc.db.sql.query<{ count: number }>('SELECT count(*)::int AS count FROM conversations WHERE account_id = $1', [a.accountId])
		expect(count).toBe(0)
		// The same bytes as JSON are malformed JSON, as before; a JSON body still creates one.
		const json = await fetch(`${n.app.url}/v1/conversations`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' }, body: '<items/>' })
		expect(json.status).toBe(400)
		expect((await json.json()).error.code).toBe('invalid_json')
		expect((await a.openai.conversations.create({ metadata: { via: 'json' } })).metadata).toEqual({ via: 'json' })
	})
})

/** The Anthropic mock's last request, as `role: text` lines. */
function anthropicTurns(): string[] {
	const body = lastRequest(n.anthropic).body as { messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }> }
	return body.messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : m.content.map((c) => c.text ?? '').join('')}`)
}

describe('responses.create with a conversation', () => {
	for (const stream of [false, true]) {
		const ask = (openai: OpenAI, body: { model: string; input: string; conversation: string | { id: string }; store?: boolean }) =>
			stream ? openai.responses.stream(body).finalResponse() : openai.responses.create(body)

		it(`should carry a Claude conversation over two turns (${stream ? 'streamed' : 'not streamed'})`, async () => {
			const a = await client()
			const conv = await a.openai.conversations.create({ items: [{ type: 'message', role: 'developer', content: 'You are terse.' }] })
			const r1 = await ask(a.openai, { model: 'claude-sonnet-5', input: 'my name is Ada', conversation: conv.id })
			expect(r1.output_text).toBe('Hello! You said: my name is Ada')
			expect(lastRequest(n.anthropic).body.system).toContain('You are terse.')

			const r2 = await ask(a.openai, { model: 'claude-sonnet-5', input: 'what is my name?', conversation: { id: conv.id } })
			expect(r2.output_text).toBe('Hello! You said: what is my name?')
			// The second turn's upstream request carries the first turn's input and output.
			expect(anthropicTurns()).toEqual(['user: my name is Ada', 'assistant: Hello! You said: my name is Ada', 'user: what is my name?'])

			const items = (await a.openai.conversations.items.list(conv.id, { order: 'asc' })).data
			expect(texts(items as never)).toEqual([
				'developer: You are terse.',
				'user: my name is Ada',
				'assistant: Hello! You said: my name is Ada',
				'user: what is my name?',
				'assistant: Hello! You said: what is my name?',
			])
			// The output items keep the ids the client saw.
			expect(items[2]!.id).toBe(r1.output[0]!.id!)
			expect(items[4]!.id).toBe(r2.output[0]!.id!)
			// Each turn is billed on the whole input the upstream read: the second one's is the larger.
			const rows = await usageRows(n.app, a.accountId)
			expect(rows.map((r) => [r.model, r.status])).toEqual([
				['claude-sonnet-5', 200],
				['claude-sonnet-5', 200],
			])
			expect(rows[0]!.input_tokens).toBe(r1.usage!.input_tokens)
			expect(rows[1]!.input_tokens).toBe(r2.usage!.input_tokens)
			expect(rows[1]!.input_tokens).toBeGreaterThan(rows[0]!.input_tokens + 8)
		})

		it(`should carry an OpenAI conversation over two turns as plain input (${stream ? 'streamed' : 'not streamed'})`, async () => {
			const a = await client()
			const conv = await a.openai.conversations.create()
			const r1 = await ask(a.openai, { model: 'gpt-4o-mini', input: 'remember blue', conversation: conv.id })
			const up1 = lastRequest(n.openai).body
			expect(up1.conversation).toBeUndefined()
			expect(up1.store).toBeUndefined()
			expect(up1.input).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'remember blue' }] }])

			const r2 = await ask(a.openai, { model: 'gpt-4o-mini', input: 'which colour?', conversation: conv.id, store: false })
			expect(r2.output_text).toBe('Hello! You said: which colour?')
			const up2 = lastRequest(n.openai).body
			expect(up2.conversation).toBeUndefined()
			expect(up2.store).toBe(false)
			expect(up2.input).toEqual([
				{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'remember blue' }] },
				expect.objectContaining({ id: r1.output[0]!.id, type: 'message', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: 'Hello! You said: remember blue' })] }),
				{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'which colour?' }] },
			])
			expect(r2.usage!.input_tokens).toBeGreaterThan(r1.usage!.input_tokens)
			const items = (await a.openai.conversations.items.list(conv.id, { order: 'asc' })).data
			expect(texts(items as never)).toEqual(['user: remember blue', 'assistant: Hello! You said: remember blue', 'user: which colour?', 'assistant: Hello! You said: which colour?'])
		})
	}

	it('should let one conversation move between Claude, Gemini and OpenAI models', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'first to claude', conversation: conv.id })
		await a.openai.responses.stream({ model: 'gemini-2.5-flash', input: 'then gemini', conversation: conv.id }).finalResponse()
		const contents = (lastRequest(n.gemini).body as { contents: Array<{ role: string; parts: Array<{ text?: string }> }> }).contents
		expect(contents.map((c) => `${c.role}: ${c.parts.map((p) => p.text ?? '').join('')}`)).toEqual(['user: first to claude', 'model: Hello! You said: first to claude', 'user: then gemini'])
		const r3 = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'and openai', conversation: conv.id })
		expect(r3.output_text).toBe('Hello! You said: and openai')
		expect((lastRequest(n.openai).body.input as unknown[]).length).toBe(5)
		expect((await a.openai.conversations.items.list(conv.id, { limit: 100 })).data.length).toBe(6)
	})

	it("should keep an OpenAI reasoning item usable next turn: by id when stored, by encrypted_content when not", async () => {
		const a = await client()
		const reasoningOf = (input: unknown) => (input as Array<{ type?: string }>).filter((i) => i.type === 'reasoning')
		// Stored (the default): OpenAI finds the reasoning item by its id.
		const stored = await a.openai.conversations.create()
		const s1 = await a.openai.responses.create({ model: 'o4-mini', input: 'think first', reasoning: { effort: 'low' }, conversation: stored.id })
		const rs = s1.output.find((o) => o.type === 'reasoning')!
		await a.openai.responses.create({ model: 'o4-mini', input: 'go on', reasoning: { effort: 'low' }, conversation: stored.id })
		expect(reasoningOf(lastRequest(n.openai).body.input)).toEqual([expect.objectContaining({ id: rs.id, type: 'reasoning' })])

		// store: false without encrypted_content: its id would be unknown to OpenAI, so it is not kept.
		const bare = await a.openai.conversations.create()
		await a.openai.responses.create({ model: 'o4-mini', input: 'think first', reasoning: { effort: 'low' }, store: false, conversation: bare.id })
		expect((await a.openai.conversations.items.list(bare.id)).data.map((i) => i.type)).toEqual(['message', 'message'])
		await a.openai.responses.create({ model: 'o4-mini', input: 'go on', reasoning: { effort: 'low' }, store: false, conversation: bare.id })
		expect(reasoningOf(lastRequest(n.openai).body.input)).toEqual([])
		expect(lastRequest(n.openai).body.include).toBeUndefined()

		// store: false with include: the encrypted reasoning is kept and replayed; listed only when asked for.
		const enc = await a.openai.conversations.create()
		const include: Array<'reasoning.encrypted_content'> = ['reasoning.encrypted_content']
		const e1 = await a.openai.responses.stream({ model: 'o4-mini', input: 'think first', reasoning: { effort: 'low' }, store: false, include, conversation: enc.id }).finalResponse()
		const encrypted = (e1.output.find((o) => o.type === 'reasoning') as { encrypted_content?: string }).encrypted_content
		expect(encrypted).toBeString()
		await a.openai.responses.create({ model: 'o4-mini', input: 'go on', reasoning: { effort: 'low' }, store: false, include, conversation: enc.id })
		expect(reasoningOf(lastRequest(n.openai).body.input)).toEqual([expect.objectContaining({ type: 'reasoning', encrypted_content: encrypted })])
		const listed = (await a.openai.conversations.items.list(enc.id, { order: 'asc' })).data.find((i) => i.type === 'reasoning') as { encrypted_content?: string }
		expect(listed.encrypted_content).toBeUndefined()
		const withEnc = (await a.openai.conversations.items.list(enc.id, { order: 'asc', include })).data.find((i) => i.type === 'reasoning') as { encrypted_content?: string }
		expect(withEnc.encrypted_content).toBe(encrypted)
	})

	it('should carry function calls and their outputs between turns (Claude)', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }]
		const r1 = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'weather please #tools', tools, conversation: conv.id })
		const calls = r1.output.filter((o) => o.type === 'function_call')
		expect(calls.length).toBe(2)
		const r2 = await a.openai.responses.create({
			model: 'claude-sonnet-5',
			tools,
			conversation: conv.id,
			input: calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `sunny in ${JSON.parse(c.arguments).city}` })),
		})
		expect(r2.output_text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
		const types = (await a.openai.conversations.items.list(conv.id, { order: 'asc' })).data.map((i) => i.type)
		expect(types).toEqual(['message', 'function_call', 'function_call', 'function_call_output', 'function_call_output', 'message'])
	})

	it('should append nothing when the response did not complete', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		const cut = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'say a lot #length', max_output_tokens: 16, conversation: conv.id })
		expect(cut.status).toBe('incomplete')
		const streamed = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'more #length', max_output_tokens: 16, conversation: conv.id }).finalResponse()
		expect(streamed.status).toBe('incomplete')
		expect((await a.openai.conversations.items.list(conv.id)).data).toEqual([])
	})

	it('should refuse previous_response_id with conversation, and background, with 400 before any upstream call', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create()
		const before = upstreamCalls()
		const both = await refused(a.openai.responses.create({ model: 'claude-sonnet-5', input: 'x', conversation: conv.id, previous_response_id: 'resp_1' }))
		expect(both!.status).toBe(400)
		expect(both!.error).toMatchObject({ code: 'mutually_exclusive_parameters', param: 'conversation' })
		expect(both!.message).toContain("Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.")
		const background = await refused(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', conversation: conv.id, background: true }))
		expect(background!.status).toBe(400)
		expect(background!.error).toMatchObject({ param: 'background' })
		expect(upstreamCalls()).toBe(before)
		expect(await usageRows(n.app, a.accountId)).toEqual([])
	})

	it('should count the input tokens of the whole conversation', async () => {
		const a = await client()
		const conv = await a.openai.conversations.create({ items: [{ role: 'user', content: 'one two three four five six seven eight' }] })
		const bare = await a.openai.responses.inputTokens.count({ model: 'claude-sonnet-5', input: 'nine' })
		const withConv = await a.openai.responses.inputTokens.count({ model: 'claude-sonnet-5', input: 'nine', conversation: conv.id })
		expect(withConv.input_tokens).toBeGreaterThanOrEqual(bare.input_tokens + 8)
	})
})
