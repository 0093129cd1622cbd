/**
 * Clients written for Azure OpenAI pointed at the gateway as their endpoint: the openai SDK's `AzureOpenAI` (with a
 * deployment, or with the model as its deployment), and Azure's v1 API. Each call is served as the same `/v1` call,
 * the deployment naming the model whatever the body says, the key read from `api-key`, for any vendor's model;
 * answers, streams and errors are OpenAI's, as Azure's are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { AzureOpenAI, NotFoundError, toFile } from 'openai'
import { wav } from '../../helpers/wav'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

const EMBED = 'text-embedding-3-small'
const WHISPER = 'whisper-1'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [{ name: 'oa-media', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [EMBED, WHISPER] }],
		models: [
			{ name: EMBED, input_per_mtok: 0.02 },
			{ name: WHISPER, per_minute: 0.006 },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const azure = (key: string, deployment?: string) => new AzureOpenAI({ endpoint: m.app.url, apiKey: key, apiVersion: '2024-10-21', deployment, maxRetries: 0 })

describe('an AzureOpenAI client', () => {
	it("should reach a deployment's model (Claude here), streamed and not, whatever model the body names", async () => {
		const acct = await m.account()
		const client = azure(acct.key, MODEL.anthropic)
		const r = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello over Azure' }] })
		expect(r.model).toBe(MODEL.anthropic)
		expect(r.choices[0]!.message.content).toContain('Hello over Azure')
		expect(lastRequest(m.mocks.anthropic).path).toBe('/v1/messages')
		expect(lastRequest(m.mocks.anthropic).headers['api-key']).toBeUndefined()
		let streamed = ''
		for await (const c of await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Streamed over Azure' }], stream: true })) streamed += c.choices[0]?.delta?.content ?? ''
		expect(streamed).toContain('Streamed over Azure')
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((x) => x.model)).toEqual([MODEL.anthropic, MODEL.anthropic])
		expect(rows.every((x) => x.cost > 0)).toBe(true)
	})

	it('should take the model as its deployment when given none, for chat, embeddings, transcriptions and Responses', async () => {
		const acct = await m.account()
		const client = azure(acct.key)
		expect((await client.chat.completions.create({ model: MODEL.gemini, messages: [{ role: 'user', content: 'hi' }] })).model).toBe(MODEL.gemini)
		const e = await client.embeddings.create({ model: EMBED, input: ['one', 'two'] })
		expect(e.data).toHaveLength(2)
		expect(lastRequest(m.mocks.openai).body).toMatchObject({ model: EMBED, input: ['one', 'two'] })
		const t = await client.audio.transcriptions.create({ model: WHISPER, file: await toFile(wav(3), 'note.wav', { type: 'audio/wav' }) })
		expect(t.text).toContain('note.wav')
		const resp = await client.responses.create({ model: MODEL.openai, input: 'Responses over Azure' })
		expect(resp.output_text).toContain('Responses over Azure')
		expect((await client.models.list()).data.map((x) => x.id)).toContain(MODEL.anthropic)
		expect((await usageRows(m, acct.accountId)).map((x) => x.model)).toEqual([MODEL.gemini, EMBED, WHISPER, MODEL.openai])
	})

	it("should send a deployment's upload on with its bytes, and hold it to the gateway's part limits before any parse", async () => {
		const acct = await m.account()
		const audio = wav(2)
		const t = await azure(acct.key, WHISPER).audio.transcriptions.create({ model: 'ignored', file: await toFile(audio, 'memo.wav', { type: 'audio/wav' }), prompt: 'names: Zoë' })
		expect(t.text).toContain('memo.wav')
		const sent = lastRequest(m.mocks.openai).form!
		expect([sent.get('model'), sent.get('prompt'), (sent.get('file') as File).type]).toEqual([WHISPER, 'names: Zoë', 'audio/wav'])
		expect(new Uint8Array(await (sent.get('file') as File).arrayBuffer())).toEqual(audio)
		// 300 one-byte fields: refused as the /v1 route refuses them (413 too_many_parts), nothing sent upstream.
		const before = m.mocks.openai.requests.length
		const B = 'azureParts'
		const fields = Array.from({ length: 300 }, (_, i) => `--${B}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`).join('')
		const res = await fetch(`${m.app.url}/openai/deployments/${WHISPER}/audio/transcriptions?api-version=2024-10-21`, {
			method: 'POST',
			headers: { 'api-key': acct.key, 'content-type': `multipart/form-data; boundary=${B}` },
			body: `${fields}--${B}--\r\n`,
		})
		expect(res.status).toBe(413)
		expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too_many_parts')
		expect(m.mocks.openai.requests.length).toBe(before)
	})

	it("should get OpenAI's errors: an unknown deployment, a missing key, a route Azure has and the gateway not", async () => {
		const acct = await m.account()
		const missing = await azure(acct.key, 'no-such-deployment')
			.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
			.catch((e: unknown) => e)
		expect(missing).toBeInstanceOf(NotFoundError)
		expect((missing as NotFoundError).code).toBe('model_not_found')
		const unauth = await azure('sk-not-a-key', MODEL.openai)
			.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
			.catch((e: { status?: number }) => e)
		expect((unauth as { status?: number }).status).toBe(401)
		const other = await fetch(`${m.app.url}/openai/deployments/${MODEL.openai}/extensions/chat/completions?api-version=2024-10-21`, {
			method: 'POST',
			headers: { 'api-key': acct.key, 'content-type': 'application/json' },
			body: '{}',
		})
		expect(other.status).toBe(404)
		expect((await other.json()).error.message).toContain('a deployment serves chat/completions, completions, embeddings')
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})
})

describe("Azure's v1 API", () => {
	it('should serve /openai/v1/… as /v1/…, the key in api-key, to pages on any origin', async () => {
		const acct = await m.account()
		const res = await fetch(`${m.app.url}/openai/v1/chat/completions`, {
			method: 'POST',
			headers: { 'api-key': acct.key, 'content-type': 'application/json', origin: 'http://localhost:5173' },
			body: JSON.stringify({ model: MODEL.anthropic, messages: [{ role: 'user', content: 'v1 over Azure' }] }),
		})
		expect(res.status).toBe(200)
		// A page calling it from a browser is let in as on /v1.
		expect(res.headers.get('access-control-allow-origin')).toBe('*')
		expect((await res.json()).choices[0].message.content).toContain('v1 over Azure')
	})
})
