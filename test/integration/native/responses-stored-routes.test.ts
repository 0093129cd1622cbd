/**
 * The routes on a stored response (retrieve, delete, cancel, input_items), through the official `openai` SDK: served
 * for the account the response was answered to, from the channel that holds it, or from the gateway's copy of a
 * converted answer; a 404 in OpenAI's shape for anyone else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { APIError } from 'openai'
import { lastRequest, SETUP_MS, startNative, openaiAccount, type Native, refused } from './setup'

let n: Native

beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)

afterAll(async () => {
	await n.close()
})

const client = () => openaiAccount(n.app)

/** `p` fails with `status`, in OpenAI's error shape. */
async function expectStatus(p: Promise<unknown>, status: number): Promise<APIError> {
	const err = await refused(p)
	expect(err).toBeInstanceOf(APIError)
	expect(err!.status).toBe(status)
	expect(typeof err!.error).toBe('object')
	return err!
}

describe('stored OpenAI responses', () => {
	it('should retrieve, list the input of and delete a response for its account only', async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'remember the stored routes' })

		const got = await a.openai.responses.retrieve(first.id)
		expect(got.id).toBe(first.id)
		expect(got.output_text).toBe('Hello! You said: remember the stored routes')
		expect(lastRequest(n.openai)).toMatchObject({ path: `/v1/responses/${first.id}` })

		const items = await a.openai.responses.inputItems.list(first.id)
		expect(items.data).toHaveLength(1)
		expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: 'remember the stored routes' })

		// Another account: the 404 OpenAI gives an unknown id, and nothing reaches the vendor.
		const before = n.openai.requests.length
		const err = await expectStatus(b.openai.responses.retrieve(first.id), 404)
		expect(err.message).toContain(`Response with id '${first.id}' not found.`)
		await expectStatus(b.openai.responses.inputItems.list(first.id), 404)
		await expectStatus(b.openai.responses.delete(first.id), 404)
		await expectStatus(b.openai.responses.cancel(first.id), 404)
		expect(n.openai.requests.length).toBe(before)

		await a.openai.responses.delete(first.id)
		expect(lastRequest(n.openai)).toMatchObject({ path: `/v1/responses/${first.id}` })
		await expectStatus(a.openai.responses.retrieve(first.id), 404)
		// Deleted: no longer continued either.
		await expectStatus(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: first.id }), 400)
	})

	it('should refuse an id the gateway never answered', async () => {
		const a = await client()
		await expectStatus(a.openai.responses.retrieve('resp_made_up'), 404)
		await expectStatus(a.openai.responses.delete('resp_made_up'), 404)
	})

	it("should pass OpenAI's 400 on for cancelling a synchronous response", async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'a synchronous answer' })
		const err = await expectStatus(a.openai.responses.cancel(first.id), 400)
		expect(err.message).toContain('Cannot cancel a synchronous response.')
	})

	it("should answer a model_map alias's response from the channel that holds it", async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'gpt-alias', input: 'alias stored' })
		expect((await a.openai.responses.retrieve(first.id)).output_text).toBe('Hello! You said: alias stored')
	})
})

describe('converted responses', () => {
	it('should retrieve, list the input of and delete the copy of a converted answer, and refuse cancel', async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'claude keeps this' })
		const before = n.anthropic.requests.length

		const got = await a.openai.responses.retrieve(first.id)
		expect(got).toMatchObject({ id: first.id, object: 'response', model: first.model, status: 'completed' })
		expect(got.output_text).toBe(first.output_text)
		expect(got.output).toEqual(first.output)
		expect(got.usage).toEqual(first.usage)
		await expectStatus(b.openai.responses.retrieve(first.id), 404)

		const items = await a.openai.responses.inputItems.list(first.id)
		expect(items.data).toHaveLength(1)
		expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'claude keeps this' }] })
		expect(items.data[0]!.id).toStartWith('msg_')
		await expectStatus(b.openai.responses.inputItems.list(first.id), 404)
		const cancel = await expectStatus(a.openai.responses.cancel(first.id), 400)
		expect(cancel.message).toContain('background: true')
		// Streaming it is OpenAI's 400 for a response not created in the background (QA: its JSON came, and the SDK's
		// stream ended with no event).
		const streamed = await expectStatus(
			(async () => {
				for await (const _ of await a.openai.responses.retrieve(first.id, { stream: true })) break
			})(),
			400,
		)
		expect(streamed.message).toContain('This response cannot be streamed because it was not created with background=true.')
		expect(streamed.param).toBe('stream')
		// None of it reached the vendor.
		expect(n.anthropic.requests.length).toBe(before)

		await expectStatus(b.openai.responses.delete(first.id), 404)
		await a.openai.responses.delete(first.id)
		await expectStatus(a.openai.responses.retrieve(first.id), 404)
	})

	it('should keep a streamed converted answer as its final Response object', async () => {
		const a = await client()
		const final = await a.openai.responses.stream({ model: 'gemini-2.5-flash', input: 'gemini streams this' }).finalResponse()
		const got = await a.openai.responses.retrieve(final.id)
		expect(got.id).toBe(final.id)
		expect(got.output_text).toBe(final.output_text)
		expect(got.status).toBe('completed')
	})

	it('should keep nothing for store: false', async () => {
		const a = await client()
		const first = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'not kept', store: false })
		await expectStatus(a.openai.responses.retrieve(first.id), 404)
	})
})
