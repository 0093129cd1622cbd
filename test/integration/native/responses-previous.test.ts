/**
 * `previous_response_id` naming a converted response (Claude, Gemini), through the official `openai` SDK and the
 * Vercel AI SDK's Responses model: the gateway expands the previous turns into plain input, as OpenAI does from its
 * stored state; lists the input items it kept; and answers 404 for an id that is not the caller's or was not stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, streamText } from 'ai'
import { APIError } from 'openai'
import type { Response as OpenAIResponse } from 'openai/resources/responses/responses'
import { lastRequest, SETUP_MS, startNative, openaiAccount, type Native, refused } from './setup'
import type { VendorMock } from '../../mocks'

let n: Native

beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)

afterAll(async () => {
	await n.close()
})

const client = () => openaiAccount(n.app)

/** Each converted vendor: its model, its mock, and the roles and texts of the conversation in its request. */
const VENDORS = {
	anthropic: {
		model: 'claude-sonnet-5',
		mock: () => n.anthropic,
		roles: (body: any): string[] => body.messages.map((m: { role: string }) => m.role),
		system: (body: any): unknown => body.system,
	},
	gemini: {
		model: 'gemini-2.5-flash',
		mock: () => n.gemini,
		roles: (body: any): string[] => body.contents.map((c: { role: string }) => c.role),
		system: (body: any): unknown => body.systemInstruction,
	},
} as const

type Acct = Awaited<ReturnType<typeof client>>

/** One turn by the `openai` SDK, streamed or not; the final Response object. */
async function turn(a: Acct, stream: boolean, body: { model: string; input: string; previous_response_id?: string; instructions?: string }): Promise<OpenAIResponse> {
	return stream ? a.openai.responses.stream(body).finalResponse() : a.openai.responses.create(body)
}

/** The last request's body the mock received, as JSON text (to find the turns' texts in it whatever the vendor's shape). */
const lastText = (mock: VendorMock) => JSON.stringify(lastRequest(mock).body)

for (const [vendor, v] of Object.entries(VENDORS)) {
	for (const stream of [false, true]) {
		describe(`previous_response_id on ${vendor}${stream ? ', streamed' : ''}`, () => {
			it('should continue three turns with the earlier turns sent as plain input, without the earlier instructions', async () => {
				const a = await client()
				const one = await turn(a, stream, { model: v.model, input: `first ${vendor} turn`, instructions: 'Answer like a pirate.' })
				expect(v.system(lastRequest(v.mock()).body)).toBeDefined()
				const two = await turn(a, stream, { model: v.model, input: `second ${vendor} turn`, previous_response_id: one.id })
				expect(two.previous_response_id).toBe(one.id)
				expect(two.output_text).toContain(`second ${vendor} turn`)
				const three = await turn(a, stream, { model: v.model, input: `third ${vendor} turn`, previous_response_id: two.id })
				expect(three.previous_response_id).toBe(two.id)

				// The third upstream request holds turns one and two, answers included, then the new input.
				const body = lastRequest(v.mock()).body
				const asked = v.roles(body)
				expect(asked).toHaveLength(5)
				expect(asked.filter((r) => r === 'user')).toHaveLength(3)
				const text = lastText(v.mock())
				for (const said of [`first ${vendor} turn`, one.output_text, `second ${vendor} turn`, two.output_text, `third ${vendor} turn`]) expect(text).toContain(said)
				expect(text.indexOf(`first ${vendor} turn`)).toBeLessThan(text.indexOf(`second ${vendor} turn`))
				expect(text.indexOf(`second ${vendor} turn`)).toBeLessThan(text.indexOf(`third ${vendor} turn`))
				// OpenAI does not carry the previous response's instructions over.
				expect(v.system(body)).toBeUndefined()
				expect(text).not.toContain('pirate')

				// Its input items: turns one and two and the third's input, newest first as OpenAI lists them.
				const items = await a.openai.responses.inputItems.list(three.id)
				expect(items.data).toHaveLength(5)
				expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `third ${vendor} turn` }] })
				expect(items.data[4]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `first ${vendor} turn` }] })
				expect(items.data[3]).toMatchObject({ id: one.output[0]!.id, type: 'message', role: 'assistant' })
			})
		})
	}
}

describe('previous_response_id of a converted response, refused', () => {
	it("should answer OpenAI's 400 for another account's converted response, before anything reaches the vendor", async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'only mine' })
		const before = n.anthropic.requests.length
		const err = await refused(b.openai.responses.create({ model: 'claude-sonnet-5', input: 'steal it', previous_response_id: first.id }))
		expect(err).toBeInstanceOf(APIError)
		expect(err!.status).toBe(400)
		expect(err!.message).toContain(`Previous response with id '${first.id}' not found.`)
		expect(err!.code).toBe('previous_response_not_found')
		expect((await refused(b.openai.responses.inputItems.list(first.id)))!.status).toBe(404)
		expect(n.anthropic.requests.length).toBe(before)
	})

	it('should answer 400 for a store: false answer, which nothing kept, and for an unknown id', async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'gemini-2.5-flash', input: 'not kept', store: false })
		const err = await refused(a.openai.responses.create({ model: 'gemini-2.5-flash', input: 'go on', previous_response_id: first.id }))
		expect(err!.status).toBe(400)
		expect(err!.message).toContain(`Previous response with id '${first.id}' not found.`)
		expect((await refused(a.openai.responses.create({ model: 'claude-sonnet-5', input: 'x', previous_response_id: 'resp_made_up' })))!.status).toBe(400)
	})

	it("should keep the 400 for an OpenAI channel's response continued on another vendor's model", async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'an openai turn' })
		const err = await refused(a.openai.responses.create({ model: 'claude-sonnet-5', input: 'x', previous_response_id: first.id }))
		expect(err!.status).toBe(400)
		expect(err!.message).toContain('previous_response_id needs the conversation stored by OpenAI')
	})
})

describe('previous_response_id of a converted response, elsewhere', () => {
	it('should continue a Claude response on an OpenAI model as plain input, and a deleted one no more', async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'claude begins' })
		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'openai goes on', previous_response_id: first.id })
		expect(next.output_text).toBe('Hello! You said: openai goes on')
		const body = lastRequest(n.openai).body
		expect(body.previous_response_id).toBeUndefined()
		expect(body.input).toHaveLength(3)
		expect(body.input[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'claude begins' }] })
		expect(body.input[1]).toMatchObject({ id: first.output[0]!.id, role: 'assistant' })
		expect(body.input[2]).toMatchObject({ role: 'user', content: [{ type: 'input_text', text: 'openai goes on' }] })

		await a.openai.responses.delete(first.id)
		expect((await refused(a.openai.responses.create({ model: 'claude-sonnet-5', input: 'x', previous_response_id: first.id })))!.status).toBe(400)
	})

	it('should count the input tokens of a continuation as the input it becomes', async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'count what came before me, please, all of it' })
		const alone = await a.openai.responses.inputTokens.count({ model: 'claude-sonnet-5', input: 'and me' })
		const chained = await a.openai.responses.inputTokens.count({ model: 'claude-sonnet-5', input: 'and me', previous_response_id: first.id })
		expect(chained.input_tokens).toBeGreaterThan(alone.input_tokens)
	})
})

describe('a converted response kept before inputs were', () => {
	it('should refuse to continue it or list its input with a 400 that says why, rather than drop the turns before it', async () => {
		const a = await client()
		const answered = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'kept by an older gateway' })
		// What a copy an older gateway wrote before the `input` column looks like (so no instance holds it in memory).
		const first = { id: `resp_older${answered.id.slice(4)}` }
		await n.app.svc.db.sql.query(
			`INSERT INTO converted_items (item_id, account_id, item) SELECT $2, account_id, item || jsonb_build_object('id', $3::text) FROM converted_items WHERE item_id = $1`,
			[`response:${answered.id}`, `response:${first.id}`, first.id],
		)
		const before = n.anthropic.requests.length
		const err = await refused(a.openai.responses.create({ model: 'claude-sonnet-5', input: 'go on', previous_response_id: first.id }))
		expect(err!.status).toBe(400)
		expect(err!.message).toContain('its input was not kept')
		const list = await refused(a.openai.responses.inputItems.list(first.id))
		expect(list!.status).toBe(400)
		expect(list!.message).toContain('before this gateway kept inputs')
		expect(n.anthropic.requests.length).toBe(before)
	})
})

describe('input_items of a converted response', () => {
	it("should page the kept input as OpenAI does: order, after, limit, has_more", async () => {
		const a = await client()
		const one = await a.openai.responses.create({ model: 'claude-sonnet-5', input: [{ role: 'user', content: 'u1' }, { role: 'user', content: 'u2' }] })
		const two = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'u3', previous_response_id: one.id })
		const all = await a.openai.responses.inputItems.list(two.id, { order: 'asc' })
		expect(all.data.map((i) => i.type)).toEqual(['message', 'message', 'message', 'message'])
		const ids = all.data.map((i) => i.id)
		expect(new Set(ids).size).toBe(4)
		// Ids are kept: the first response lists its own input under the same ids.
		expect((await a.openai.responses.inputItems.list(one.id, { order: 'asc' })).data.map((i) => i.id)).toEqual(ids.slice(0, 2))

		const page = await a.openai.responses.inputItems.list(two.id, { order: 'asc', limit: 3 })
		expect(page.data.map((i) => i.id)).toEqual(ids.slice(0, 3))
		expect(page.has_more).toBe(true)
		// The list's own fields, as OpenAI sends them (the SDK's page object keeps only `data` and `has_more`).
		const raw = await fetch(`${n.app.url}/v1/responses/${two.id}/input_items?order=asc&limit=3`, { headers: { authorization: `Bearer ${a.key}` } })
		expect(await raw.json()).toMatchObject({ object: 'list', first_id: ids[0], last_id: ids[2], has_more: true })
		const rest = await a.openai.responses.inputItems.list(two.id, { order: 'asc', limit: 3, after: ids[2]! })
		expect(rest.data.map((i) => i.id)).toEqual([ids[3]])
		expect(rest.has_more).toBe(false)
		// The SDK's own paging walks every item, newest first by default.
		const walked: string[] = []
		for await (const item of a.openai.responses.inputItems.list(two.id, { limit: 1 })) walked.push(item.id!)
		expect(walked).toEqual([...ids].reverse())

		const bad = await refused(a.openai.responses.inputItems.list(two.id, { after: 'msg_nowhere' }))
		expect(bad!.status).toBe(400)
	})
})

describe('previousResponseId through the Vercel AI SDK', () => {
	for (const [vendor, v] of Object.entries(VENDORS)) {
		for (const stream of [false, true]) {
			it(`should chain three turns on ${vendor}${stream ? ', streamed' : ''}`, async () => {
				const a = await client()
				const model = createOpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1` }).responses(v.model)
				const say = async (prompt: string, previousResponseId?: string) => {
					const opts = { model, prompt, providerOptions: { openai: previousResponseId ? { previousResponseId } : {} } }
					if (!stream) {
						const r = await generateText(opts)
						return { text: r.text, id: String(r.providerMetadata?.openai?.responseId) }
					}
					const s = streamText(opts)
					const text = await s.text
					return { text, id: String((await s.providerMetadata)?.openai?.responseId) }
				}
				const one = await say(`ai sdk one on ${vendor}`)
				const two = await say(`ai sdk two on ${vendor}`, one.id)
				expect(two.text).toContain(`ai sdk two on ${vendor}`)
				await say(`ai sdk three on ${vendor}`, two.id)
				expect(v.roles(lastRequest(v.mock()).body)).toHaveLength(5)
				const text = lastText(v.mock())
				for (const said of [`ai sdk one on ${vendor}`, one.text, `ai sdk two on ${vendor}`, two.text, `ai sdk three on ${vendor}`]) expect(text).toContain(said)
			})
		}
	}
})
