/**
 * http/multipart.ts: forms read along their delimiters as Blob slices, and written as a stream of their parts. Read
 * against Bun's own parser on the bodies real encoders write (Bun's FormData, the openai SDK's, ours), and left to it
 * for every shape this reader does not take.
 */
import { describe, expect, it } from 'bun:test'
import { multipartBody, parseMultipart, scanForm } from '../../../src/http/multipart'

const enc = new TextEncoder()
const B = 'XyZboundary'
const TYPE = `multipart/form-data; boundary=${B}`
const CRLF_LENGTH = 2

/** What a form holds, comparable: text as is, a file as its name, type and bytes. */
async function entriesOf(form: FormData) {
	const out: unknown[] = []
	for (const [k, v] of form.entries() as Iterable<[string, FormDataEntryValue]>) out.push([k, typeof v === 'string' ? v : { name: v.name, type: v.type, bytes: [...(await v.bytes())] }])
	return out
}

async function ours(body: Uint8Array<ArrayBuffer> | string, type = TYPE) {
	const blob = new Blob([body])
	const scan = await scanForm(blob, type)
	return scan && parseMultipart(blob, scan)
}

const bunParse = (body: Uint8Array<ArrayBuffer> | string, type = TYPE) => new Response(body, { headers: { 'content-type': type } }).formData()

/** A form as Bun's fetch encodes it: the bytes and the content-type it sends. */
async function encodedByBun(form: FormData) {
	const req = new Request('http://x/', { method: 'POST', body: form })
	// Read before the body: Bun drops the header once the body is consumed.
	const type = req.headers.get('content-type')!
	return { bytes: await req.bytes(), type }
}

const sample = () => {
	const form = new FormData()
	form.append('model', 'whisper-1')
	form.append('prompt', 'naïve café — "quoted" {"json": true}\r\nsecond line')
	form.append('file', new File([new Uint8Array([0, 1, 2, 255, 13, 10, 45, 45])], 'speech.mp3', { type: 'audio/mpeg' }))
	form.append('image[]', new File([new Uint8Array([137, 80, 78, 71])], 'a.png', { type: 'image/png' }))
	form.append('image[]', new File([new Uint8Array([137, 80, 78, 71, 0])], 'b.png', { type: 'image/png' }))
	form.append('timestamp_granularities[]', 'word')
	form.append('timestamp_granularities[]', 'segment')
	return form
}

describe('parseMultipart', () => {
	it("should read what Bun's FormData encodes as Bun's parser does: text, repeated names, files' names and bytes", async () => {
		const { bytes, type } = await encodedByBun(sample())
		const read = await ours(bytes, type)
		expect(read).toBeInstanceOf(FormData)
		expect(await entriesOf(read!)).toEqual(await entriesOf(await bunParse(bytes, type)))
	})

	it("should keep the type a file's part declares, where Bun's parser guesses one from the name's extension", async () => {
		const body = `--${B}\r\nContent-Disposition: form-data; name="image"; filename="photo"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--${B}\r\nContent-Disposition: form-data; name="mask"; filename="m.wav"\r\nContent-Type: image/webp\r\n\r\nW\r\n--${B}\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\n\r\nX\r\n--${B}--\r\n`
		const files = (await ours(body))!
		expect([(files.get('image') as File).type, (files.get('mask') as File).type, (files.get('f') as File).type]).toEqual(['image/png', 'image/webp', 'application/octet-stream'])
		expect([(await bunParse(body)).get('image') as File].map((f) => f.type)).toEqual([''])
	})

	it('should name a file sent with an empty file name `blob`, as Bun writes a Blob appended without one', async () => {
		const form = new FormData()
		form.append('image', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }))
		const { bytes, type } = await encodedByBun(form)
		expect(new TextDecoder().decode(bytes)).toContain('filename=""')
		const file = (await ours(bytes, type))!.get('image') as File
		expect([file.name, file.type, file.size]).toEqual(['blob', 'image/png', 3])
	})

	it('should skip a preamble and an epilogue, read header names in any case, ignore other headers and keep line ends inside a value', async () => {
		const body = `ignored preamble\r\n--${B}\r\ncontent-disposition: form-data; name="a"\r\nX-Other: 1\r\n\r\nx\r\ny --${B} inside\r\n--${B}\r\nContent-Disposition: form-data; filename="f.txt"; name="b"\r\ncontent-type: text/plain\r\n\r\nF\r\n--${B}--\r\nepilogue`
		expect(await entriesOf((await ours(body))!)).toEqual([
			['a', `x\r\ny --${B} inside`],
			// Bun's File adds the charset to a text/plain type.
			['b', { name: 'f.txt', type: 'text/plain;charset=utf-8', bytes: [70] }],
		])
	})

	it('should find a delimiter that straddles two of the pieces the body is searched in, and a file larger than a piece', async () => {
		const PIECE = 1 << 20
		const head = `--${B}\r\nContent-Disposition: form-data; name="big"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
		const tail = `\r\n--${B}\r\nContent-Disposition: form-data; name="after"\r\n\r\ntail\r\n--${B}--\r\n`
		// The second delimiter starting k bytes before a piece ends (k = 0: at the next piece's first byte, its line end
		// in the piece before), then a file three pieces long.
		for (const start of [...[0, 1, 2, 5, B.length + 1].map((k) => PIECE - k), 3 * PIECE + 7]) {
			const size = start - CRLF_LENGTH - head.length
			const body = new Uint8Array([...enc.encode(head), ...new Uint8Array(size).fill(45), ...enc.encode(tail)])
			expect(new TextDecoder().decode(body.subarray(start, start + 2 + B.length))).toBe(`--${B}`)
			const read = (await ours(body))!
			expect([start, read.get('after')]).toEqual([start, 'tail'])
			expect((read.get('big') as File).size).toBe(size)
		}
	})

	it("should leave every other shape to Bun's parser (undefined), which decides as before", async () => {
		const part = (disposition: string, extra = '') => `--${B}\r\nContent-Disposition: ${disposition}\r\n${extra}\r\nx\r\n--${B}--\r\n`
		const shapes = {
			'bare line feeds': `--${B}\nContent-Disposition: form-data; name="a"\n\nx\n--${B}--\n`,
			'padding after the delimiter': `--${B}  \r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${B}--\r\n`,
			'no disposition': `--${B}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${B}--\r\n`,
			'not form-data': part('attachment; name="a"'),
			'an unquoted name': part('form-data; name=a'),
			'a backslash in a name': part('form-data; name="a\\"b"'),
			'an encoded file name': part(`form-data; name="a"; filename*=UTF-8''%E6%97%A5.wav`),
			'a folded header': part('form-data;', ' name="a"\r\n'),
			'no close delimiter': `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n`,
			'text that is not UTF-8': new Uint8Array([...enc.encode(`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\n`), 0xff, 0xfe, ...enc.encode(`\r\n--${B}--\r\n`)]),
		}
		for (const [shape, body] of Object.entries(shapes)) expect([shape, await ours(body)]).toEqual([shape, undefined])
		expect(await scanForm(new Blob(['x']), 'multipart/form-data')).toBeUndefined()
	})
})

describe('multipartBody', () => {
	it("should write a form Bun's parser reads back whole, with the length it sends", async () => {
		const form = sample()
		form.append('na"me\r\n', new File([new Uint8Array([9])], 'fi"le\n.bin', { type: 'application/x-thing' }))
		const { body, headers } = multipartBody(form)
		const bytes = await new Response(body).bytes()
		expect(Number(headers['content-length'])).toBe(bytes.length)
		const escaped = (entries: unknown[]) =>
			entries.map((e) => {
				const [k, v] = e as [string, { name: string }]
				return k === 'na"me\r\n' ? ['na%22me%0D%0A', { ...v, name: 'fi%22le%0A.bin' }] : e
			})
		// Names escaped as browsers escape them, which parsers keep as they are. Bun's parser reads every name, value and
		// byte back (its types it guesses from the names: left out here) …
		const untyped = (entries: unknown[]) => entries.map((e) => (typeof (e as [string, unknown])[1] === 'string' ? e : [(e as [string, object])[0], { ...(e as [string, object])[1], type: undefined }]))
		expect(untyped(await entriesOf(await bunParse(bytes, headers['content-type'])))).toEqual(untyped(escaped(await entriesOf(form))))
		// … and ours the declared types too.
		expect(await entriesOf((await ours(bytes, headers['content-type']))!)).toEqual(escaped(await entriesOf(form)))
	})

	it('should make a new stream and boundary at each call, so a call made again sends the form again', async () => {
		const form = sample()
		const a = multipartBody(form)
		const b = multipartBody(form)
		expect(a.headers['content-type']).not.toBe(b.headers['content-type'])
		const [x, y] = await Promise.all([new Response(a.body).bytes(), new Response(b.body).bytes()])
		expect(x.length).toBe(y.length)
		expect(x.length).toBe(Number(a.headers['content-length']))
	})

	it('should hand a large file over in pieces, not as one copy', async () => {
		const form = new FormData()
		form.append('file', new File([new Uint8Array(5 << 20).fill(1)], 'big.wav', { type: 'audio/wav' }))
		const reader = multipartBody(form).body.getReader()
		let largest = 0
		let total = 0
		for (let r = await reader.read(); !r.done; r = await reader.read()) {
			largest = Math.max(largest, r.value.length)
			total += r.value.length
		}
		expect(total).toBeGreaterThan(5 << 20)
		expect(largest).toBeLessThan(5 << 20)
	})
})
