/** formLimitError: a multipart body's parts and part headers counted on its bytes, before any parse. */
import { describe, expect, it } from 'bun:test'
import { formLimitError, MAX_FORM_PARTS, MAX_PART_HEADER_BYTES } from '../../../src/http/form-limits'
import { boundaryOf, scanForm } from '../../../src/http/multipart'

const enc = (s: string) => new TextEncoder().encode(s)
const field = (b: string, name: string, eol = '\r\n') => `--${b}${eol}Content-Disposition: form-data; name="${name}"${eol}${eol}x${eol}`
const form = (b: string, n: number, eol = '\r\n') => enc(Array.from({ length: n }, (_, i) => field(b, `f${i}`, eol)).join('') + `--${b}--${eol}`)

describe('boundaryOf', () => {
	it('should read the boundary bare or quoted, in any case of the parameter', () => {
		expect(boundaryOf('multipart/form-data; boundary=abc')).toBe('abc')
		expect(boundaryOf('multipart/form-data; charset=utf-8; Boundary="a b:c"')).toBe('a b:c')
		expect(boundaryOf('multipart/form-data')).toBeUndefined()
	})
})

describe('formLimitError', () => {
	const type = 'multipart/form-data; boundary=XyZ'
	const limitError = async (bytes: Uint8Array<ArrayBuffer>, contentType = type) => {
		const body = new Blob([bytes])
		const scan = await scanForm(body, contentType)
		return scan && formLimitError(body, scan)
	}
	it('should take exactly MAX_FORM_PARTS parts, the close delimiter not counted, and refuse one more with 413', async () => {
		expect(await limitError(form('XyZ', MAX_FORM_PARTS))).toBeUndefined()
		const e = await limitError(form('XyZ', MAX_FORM_PARTS + 1))
		expect([e?.status, e?.code]).toEqual([413, 'too_many_parts'])
	})

	it('should count parts separated by bare line feeds too, which a lenient parser would take', async () => {
		expect((await limitError(form('XyZ', MAX_FORM_PARTS + 1, '\n')))?.code).toBe('too_many_parts')
	})

	it("should refuse a part whose headers run past MAX_PART_HEADER_BYTES, and take a long file name within it", async () => {
		const long = enc(field('XyZ', 'n'.repeat(MAX_PART_HEADER_BYTES)) + '--XyZ--\r\n')
		expect((await limitError(long))?.code).toBe('part_header_too_large')
		const named = enc(`--XyZ\r\nContent-Disposition: form-data; name="file"; filename="${'é'.repeat(255)}.png"\r\nContent-Type: image/png\r\n\r\n${'x'.repeat(20_000)}\r\n--XyZ--\r\n`)
		expect(await limitError(named)).toBeUndefined()
	})

	it('should stop searching a body of nothing but delimiters at twice the parts a form may have, and refuse it', async () => {
		const body = new Blob([enc('--a'.repeat(3 * 1024 * 1024))])
		const scan = (await scanForm(body, 'multipart/form-data; boundary=a'))!
		expect([scan.at.length, scan.more]).toEqual([2 * (MAX_FORM_PARTS + 1), true])
		expect((await formLimitError(body, scan))?.code).toBe('too_many_parts')
	})

	it('should leave a body without a boundary to the parser', async () => {
		expect(await limitError(form('XyZ', MAX_FORM_PARTS + 1), 'multipart/form-data')).toBeUndefined()
	})
})
