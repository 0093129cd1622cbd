/**
 * A multipart upload is bounded in its parts (MAX_FORM_PARTS) and its parts' headers (a field's name, a file's name)
 * before it is parsed: 200,000 tiny fields within MAX_UPLOAD_BYTES once held the event loop for seconds (a name
 * repeated that often, for minutes), while the gateway answered nobody else. Refused fast in OpenAI's shape, nothing
 * sent upstream or charged; the largest upload a real client sends (16 images, a mask, every field) is still served.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { MAX_FORM_PARTS } from '../../../src/http/form-limits'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { PNG_1X1 } from '../../mocks/openai/media'
import { priceList } from '../surface/helpers'

let oa: VendorMock
let app: TestApp
const PNG = new Uint8Array(Buffer.from(PNG_1X1, 'base64'))
const BOUNDARY = 'sbPartsBoundary7MA4YWxkTrZu0gW'

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-image-1', 'whisper-1'] }],
			models: priceList([
				{ name: 'gpt-image-1', input_per_mtok: 10, output_per_mtok: 40 },
				{ name: 'whisper-1', per_minute: 0.006 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

beforeEach(() => oa.reset())

/** A multipart body of `n` one-byte text fields (named by `name(i)`), after a model and prompt, built by hand as an attacker would. */
function manyFields(n: number, name: (i: number) => string, prompt = 'x'): Uint8Array<ArrayBuffer> {
	const parts = [`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt-image-1\r\n`, `--${BOUNDARY}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n${prompt}\r\n`]
	for (let i = 0; i < n; i++) parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name(i)}"\r\n\r\nx\r\n`)
	parts.push(`--${BOUNDARY}--\r\n`)
	return new TextEncoder().encode(parts.join(''))
}

/** As many bytes as `size`, in one field too many (MAX_FORM_PARTS + 1 parts, one prompt holding the bulk): refused on the same check with no parse to speak of. */
function fewFields(size: number): Uint8Array<ArrayBuffer> {
	const short = manyFields(MAX_FORM_PARTS - 1, (i) => `f${i}`).length
	return manyFields(MAX_FORM_PARTS - 1, (i) => `f${i}`, 'x'.repeat(size - short + 1))
}

const post = (key: string, path: string, body: Uint8Array<ArrayBuffer>) =>
	fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body })

/**
 * The longest a cheap request takes while `busy` is in flight, asked again and again until it is answered: the event
 * loop is free if none waits long. Probing only once could miss a hold that begins when the last byte arrives.
 */
async function whileBusy(busy: Promise<Response>, key: string) {
	let done = false
	busy.then(
		() => (done = true),
		() => (done = true),
	)
	let ms = 0
	let status = 200
	do {
		const t = performance.now()
		const res = await fetch(`${app.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
		await res.arrayBuffer()
		ms = Math.max(ms, performance.now() - t)
		if (res.status !== 200) status = res.status
	} while (!done)
	return { status, ms }
}

describe('multipart parts', () => {
	for (const [label, name] of [
		['distinct names', (i: number) => `f${i}`],
		['one name repeated', () => 'image[]'],
	] as const) {
		it(`should refuse 200,000 tiny fields (${label}) fast with OpenAI's 413, charging nothing, and keep answering others`, async () => {
			const { key, accountId } = await app.account(1)
			const body = manyFields(200_000, name)
			expect(body.length).toBeLessThan(app.svc.env.maxUploadBytes)
			// What taking in and refusing as many bytes costs the loop on this machine now, with no parts to speak of.
			const few = fewFields(body.length)
			expect(few.length).toBe(body.length)
			const fewPending = post(key, '/v1/images/edits', few)
			const baseline = await whileBusy(fewPending, key)
			expect(((await (await fewPending).json()) as any).error.code).toBe('too_many_parts')
			const t = performance.now()
			const pending = post(key, '/v1/images/edits', body)
			const other = await whileBusy(pending, key)
			const res = await pending
			const ms = performance.now() - t
			const json = (await res.json()) as any
			expect(res.status).toBe(413)
			expect(json.error.type).toBe('invalid_request_error')
			expect(json.error.code).toBe('too_many_parts')
			expect(json.error.message).toContain(`at most ${MAX_FORM_PARTS}`)
			// Refused on the bytes, before any parse: the parse it replaced took seconds (distinct names) to 70 s (one name).
			// The bound leaves room for uploading 13 MB on a loaded 2-core machine (1.6 s seen in CI beside other work).
			expect(ms).toBeLessThan(5_000)
			expect(other.status).toBe(200)
			// Not held by a parse: the parse this check replaced held the loop 1.2 s (distinct names) to 70 s (one name) on a
			// slow VM. What remains are stalls while the 17 MB body is taken in and held (the part check itself takes ~1 ms; a
			// profile points at the collector): 90–320 ms measured there with curl as the client, 0.73–1.09 s in CI, where
			// the machine's load moves it. So it is measured against the same bytes in few parts, refused the same way.
			// A parse holds the loop on every try; the machine's other work comes and goes. So, when the first try is over the
			// bound, both are measured once more and the better of each counted (CI saw 805 ms against a 35 ms baseline once).
			let [busy, calm] = [other.ms, baseline.ms]
			if (busy >= calm + 600) {
				const again = post(key, '/v1/images/edits', few)
				calm = Math.min(calm, (await whileBusy(again, key)).ms)
				await again
				const retry = post(key, '/v1/images/edits', body)
				busy = Math.min(busy, (await whileBusy(retry, key)).ms)
				expect((await retry).status).toBe(413)
			}
			expect(busy).toBeLessThan(calm + 600)
			expect(baseline.status).toBe(200)
			expect(oa.requests).toHaveLength(0)
			expect(await app.balance(accountId)).toBe(1)
		}, 120_000)
	}

	it('should refuse one field too many on a transcription too, and take the limit itself', async () => {
		const { key } = await app.account(1)
		const over = await post(key, '/v1/audio/transcriptions', manyFields(MAX_FORM_PARTS - 1, (i) => `f${i}`))
		expect(over.status).toBe(413)
		expect(((await over.json()) as any).error.code).toBe('too_many_parts')
		// MAX_FORM_PARTS parts in all (model, prompt and the rest) is not refused for its parts: no file, so 400 naming it.
		const at = await post(key, '/v1/audio/transcriptions', manyFields(MAX_FORM_PARTS - 2, (i) => `f${i}`))
		const json = (await at.json()) as any
		expect(at.status).toBe(400)
		expect(json.error.code).not.toBe('too_many_parts')
		expect(oa.requests).toHaveLength(0)
	})

	it("should refuse a field name of 64 KiB with OpenAI's 400 before sending anything upstream", async () => {
		const { key, accountId } = await app.account(1)
		const res = await post(key, '/v1/images/edits', manyFields(1, () => 'n'.repeat(64 * 1024)))
		const json = (await res.json()) as any
		expect(res.status).toBe(400)
		expect(json.error.type).toBe('invalid_request_error')
		expect(json.error.code).toBe('part_header_too_large')
		expect(oa.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should serve the largest edit a real client sends: 16 images, a mask and every field, through the SDK', async () => {
		const { key } = await app.account(10)
		const sdk = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const r = await sdk.images.edit({
			model: 'gpt-image-1',
			image: await Promise.all(Array.from({ length: 16 }, (_, i) => toFile(PNG, `in-${i}.png`, { type: 'image/png' }))),
			mask: await toFile(PNG, 'mask.png', { type: 'image/png' }),
			prompt: 'add a hat',
			background: 'transparent',
			input_fidelity: 'high',
			n: 1,
			output_compression: 80,
			output_format: 'webp',
			quality: 'low',
			size: '1024x1024',
			user: 'u-1',
		})
		expect(r.data?.[0]?.b64_json).toBe(PNG_1X1)
		const form = oa.requests[0]!.form!
		expect(form.getAll('image[]')).toHaveLength(16)
		expect(form.get('mask')).toBeInstanceOf(File)
	})
})
