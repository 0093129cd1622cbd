/**
 * Stored responses belong to the account they were answered to (outside QA pass, item 8): every account shares the
 * channel's OpenAI key, so without the gateway's check account B could continue account A's stored response. Through
 * the official `openai` SDK, as users call it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { APIError } from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { usageRows, refused } from './setup'

let near: VendorMock
let far: VendorMock
let claude: VendorMock
let app: TestApp

beforeAll(async () => {
	near = await startOpenAIMock({ apiKey: 'up-near' })
	far = await startOpenAIMock({ apiKey: 'up-far' })
	claude = await startAnthropicMock({ apiKey: 'up-claude' })
	app = await startTestApp({
		config: {
			channels: [
				// gpt-4o-mini goes to `near` first; `only-far` is served by `far` alone (as gpt-4o-mini).
				{ name: 'near', type: 'openai', base_url: near.url, api_key: 'up-near', models: ['gpt-4o-mini', 'o4-mini'], priority: 0 },
				{ name: 'claude', type: 'anthropic', base_url: claude.url, api_key: 'up-claude', models: ['claude-sonnet-5'] },
				{ name: 'far', type: 'openai', base_url: far.url, api_key: 'up-far', models: ['gpt-4o-mini', 'only-far'], model_map: { 'only-far': 'gpt-4o-mini' }, priority: 1 },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'only-far', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'o4-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-sonnet-5', input_per_mtok: 1, output_per_mtok: 2 },
			],
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await near.stop()
	await far.stop()
	await claude.stop()
})

const client = async () => {
	const a = await app.account(1)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }) }
}
const upstreamCalls = () => near.requests.length + far.requests.length

/** B's continuation of `id` is a 404 in OpenAI's shape, sent nowhere, reserved and charged nothing. */
async function expectRefused(b: { accountId: number; openai: OpenAI }, body: Parameters<OpenAI['responses']['create']>[0], code: string, param: string) {
	const before = upstreamCalls()
	const err = await refused(b.openai.responses.create(body))
	expect(err).toBeInstanceOf(APIError)
	// OpenAI answers an unknown previous response 400, an unknown conversation 404.
	expect(err!.status).toBe(param === 'conversation' ? 404 : 400)
	expect(err!.error).toMatchObject({ type: 'invalid_request_error', code, param })
	expect(upstreamCalls()).toBe(before)
	expect(await app.balance(b.accountId)).toBe(1)
	expect(await usageRows(app, b.accountId)).toEqual([])
}

describe('previous_response_id across accounts', () => {
	it('should let only the account that received a response continue it', async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'secret plan of account a' })
		await expectRefused(b, { model: 'gpt-4o-mini', input: 'repeat what I said', previous_response_id: first.id }, 'previous_response_not_found', 'previous_response_id')
		const err = await refused(b.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: first.id }))
		expect(err!.message).toContain(`Previous response with id '${first.id}' not found.`)

		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'and then?', previous_response_id: first.id })
		expect(next.output_text).toBe('Hello! You said: and then?')
		expect(near.requests.at(-1)!.body).toMatchObject({ previous_response_id: first.id })
		// A's two calls are billed as usual.
		expect((await usageRows(app, a.accountId)).map((r) => r.end_reason)).toEqual(['ok', 'ok'])
	})

	it('should record the id of a streamed response before the client sees it', async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'streamed secret of account a' }).finalResponse()
		await expectRefused(b, { model: 'gpt-4o-mini', input: 'go on', previous_response_id: first.id }, 'previous_response_not_found', 'previous_response_id')
		const next = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'go on streaming', previous_response_id: first.id }).finalResponse()
		expect(next.output_text).toBe('Hello! You said: go on streaming')
	})

	it('should refuse an id the gateway never answered, and one of a response not stored', async () => {
		const a = await client()
		await expectRefused(a, { model: 'gpt-4o-mini', input: 'x', previous_response_id: 'resp_made_up' }, 'previous_response_not_found', 'previous_response_id')
		const unstored = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'not stored by account a', store: false })
		const err = await refused(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: unstored.id }))
		expect(err!.status).toBe(400)
	})

	it('should refuse a conversation that is not the caller\'s', async () => {
		const b = await client()
		await expectRefused(b, { model: 'gpt-4o-mini', input: 'x', conversation: 'conv_of_someone_else' }, 'conversation_not_found', 'conversation')
		await expectRefused(b, { model: 'gpt-4o-mini', input: 'x', conversation: { id: 'conv_of_someone_else' } }, 'conversation_not_found', 'conversation')
	})

	it('should continue on the channel that holds the response', async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'only-far', input: 'held by the far channel' })
		expect((far.requests.at(-1)!.body as { input?: unknown }).input).toBe('held by the far channel')
		const nearBefore = near.requests.length
		// gpt-4o-mini would go to `near` first, which does not hold the response.
		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'continue far', previous_response_id: first.id })
		expect(next.output_text).toBe('Hello! You said: continue far')
		expect(near.requests.length).toBe(nearBefore)
		expect(far.requests.at(-1)!.body).toMatchObject({ input: 'continue far', previous_response_id: first.id })
		// The channel skipped for not holding the response is not held against it.
		const health = (await app.admin('/api/channels')).body.data.find((c: { name: string }) => c.name === 'near').health
		expect(health).toMatchObject({ state: 'closed', consecutive_failures: 0 })
	})
})

describe('item_reference across accounts', () => {
	// OpenAI resolves a referenced item in the project of the key, which every account shares: the gateway records the
	// items each account was answered (or listed) and refuses any other with OpenAI's 404 for an unknown item.
	type Input = OpenAI.Responses.ResponseInput
	const ref = (id: string, text: string): Input => [{ type: 'item_reference', id }, { role: 'user', content: text }]

	async function expectItemRefused(b: { accountId: number; openai: OpenAI }, id: string) {
		const before = upstreamCalls()
		const err = await refused(b.openai.responses.create({ model: 'gpt-4o-mini', input: ref(id, 'what did they say?') }))
		expect(err).toBeInstanceOf(APIError)
		expect(err!.status).toBe(404)
		expect(err!.error).toMatchObject({ type: 'invalid_request_error', code: null, param: 'input', message: `Item with id '${id}' not found.` })
		expect(upstreamCalls()).toBe(before)
		expect(await app.balance(b.accountId)).toBe(1)
		expect(await usageRows(app, b.accountId)).toEqual([])
	}

	it("should let only the account answered a response's output items name them", async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'item secret of account a' })
		const id = first.output[0]!.id!
		expect(id).toStartWith('msg_')
		await expectItemRefused(b, id)
		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: ref(id, 'go on from there') })
		expect(next.output_text).toBe('Hello! You said: go on from there')
		expect((near.requests.at(-1)!.body as { input: unknown[] }).input[0]).toEqual({ type: 'item_reference', id })
	})

	it("should record a streamed response's items before its end goes out, so the next turn may name them at once", async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'streamed item secret of account a' }).finalResponse()
		const id = first.output[0]!.id!
		const next = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: ref(id, 'streaming on') }).finalResponse()
		expect(next.output_text).toBe('Hello! You said: streaming on')
		await expectItemRefused(b, id)
	})

	it('should let the account name the input items it listed', async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'listed input of account a' })
		const listed = await a.openai.responses.inputItems.list(first.id)
		const id = listed.data[0]!.id
		await expectItemRefused(b, id)
		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: ref(id, 'named my own input') })
		expect(next.output_text).toBe('Hello! You said: named my own input')
	})

	it("should hold a reasoning item replayed by its id alone (OpenAI fetches its reasoning by it) to the same rule", async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'o4-mini', input: 'reason about account a', reasoning: { effort: 'low' } })
		const rs = first.output.find((o) => o.type === 'reasoning')!
		expect(rs.id).toStartWith('rs_')
		const replay = (text: string): Input => [{ type: 'reasoning', id: rs.id, summary: [] }, { role: 'user', content: text }]
		const before = upstreamCalls()
		const err = await refused(b.openai.responses.create({ model: 'o4-mini', input: replay('and now?'), reasoning: { effort: 'low' } }))
		expect(err!.status).toBe(404)
		expect(err!.error).toMatchObject({ param: 'input', message: `Item with id '${rs.id}' not found.` })
		expect(upstreamCalls()).toBe(before)
		const next = await a.openai.responses.create({ model: 'o4-mini', input: replay('go on reasoning'), reasoning: { effort: 'low' } })
		expect(next.output_text).toBe('Hello! You said: go on reasoning')
		// Another vendor's model looks nothing up: the account's own item is read as the reasoning it carries; one that is
		// not the account's is OpenAI's unknown item (a 404 before the vendor, as any reasoning id the gateway cannot find).
		const converted = await a.openai.responses.create({ model: 'claude-sonnet-5', input: replay('to claude'), max_output_tokens: 50 })
		expect(converted.output_text).toBe('Hello! You said: to claude')
		const foreign = await refused(b.openai.responses.create({ model: 'claude-sonnet-5', input: replay('to claude'), max_output_tokens: 50 }))
		expect(foreign!.status).toBe(404)
		expect(foreign!.message).toContain(`Item with id '${rs.id}' not found.`)
		// Unstored, OpenAI looks nothing up (it refuses such an item itself): the gateway leaves it to OpenAI.
		const unstored = await refused(b.openai.responses.create({ model: 'o4-mini', input: replay('unstored'), reasoning: { effort: 'low' }, store: false }))
		expect(unstored!.message).toContain('Items are not persisted when `store` is set to false')
	})

	it('should refuse an item never answered to anyone, and send a reference to the channel holding the item', async () => {
		const a = await client()
		await expectItemRefused(a, 'msg_0123456789abcdef0123456789abcdef')
		const first = await a.openai.responses.create({ model: 'only-far', input: 'item held far away' })
		const nearBefore = near.requests.length
		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: ref(first.output[0]!.id!, 'refer far') })
		expect(next.output_text).toBe('Hello! You said: refer far')
		expect(near.requests.length).toBe(nearBefore)
	})
})
