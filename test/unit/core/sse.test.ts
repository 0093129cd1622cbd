import { describe, expect, it } from 'bun:test'
import { createSseParser, eachFrame, formatSse, parseSse, type SseFrame, sseBatchReader } from '../../../src/core/sse'

async function* chunks(...parts: string[]) {
	const te = new TextEncoder()
	for (const p of parts) yield te.encode(p)
}
const collect = async (it: AsyncIterable<unknown>) => {
	const out = []
	for await (const x of it) out.push(x)
	return out
}

describe('parseSse', () => {
	it('should join multi-line data and read event names', async () => {
		expect(await collect(parseSse(chunks('event: a\ndata: 1\ndata: 2\n\n')))).toEqual([{ event: 'a', data: '1\n2' }])
	})
	it('should handle CRLF split across chunks and ignore comments', async () => {
		expect(await collect(parseSse(chunks(': ping\r', '\n\r\ndata: x\r', '\n\r', '\n')))).toEqual([{ data: 'x' }])
	})
	it('should decode multi-byte characters split across chunks', async () => {
		const bytes = new TextEncoder().encode('data: héllo\n\n')
		async function* split() {
			yield bytes.slice(0, 8)
			yield bytes.slice(8)
		}
		expect(await collect(parseSse(split()))).toEqual([{ data: 'héllo' }])
	})
	it('should dispatch a final event without a trailing blank line', async () => {
		expect(await collect(parseSse(chunks('data: last')))).toEqual([{ data: 'last' }])
	})
})

describe('formatSse', () => {
	it('should write event and data lines', () => expect(formatSse({ event: 'x', data: 'a\nb' })).toBe('event: x\ndata: a\ndata: b\n\n'))
})

describe('createSseParser', () => {
	// Vendor shapes (data only; event + data), and the ones read line by line: multi-line data, comments, ids, CRLF,
	// fields without a space, an event without data, a data line with an empty value.
	const corpus = [
		'data: {"a":1}\n\n',
		'event: message_start\ndata: {"type":"message_start"}\n\n',
		': keepalive\n\n',
		'data: line one\ndata: line two\n\n',
		'id: 7\nevent: e\ndata: x\n\n',
		'data:nospace\n\n',
		'event: ping\n\n',
		'data: after ping\n\n',
		'data: crlf\r\n\r\n',
		'data: \n\n',
		'data: [DONE]\n\n',
	].join('')
	const whole = (keepRaw: boolean) => {
		const p = createSseParser(keepRaw)
		return [...p.push(corpus), ...p.end()]
	}

	it('should read vendor-shaped and general frames alike, each with its text as received', () => {
		const frames = whole(true)
		expect(frames.map((f) => [f.event ?? null, f.data, f.id ?? null])).toEqual([
			[null, '{"a":1}', null],
			['message_start', '{"type":"message_start"}', null],
			[null, 'line one\nline two', null],
			['e', 'x', '7'],
			[null, 'nospace', '7'],
			[null, 'after ping', '7'],
			[null, 'crlf', '7'],
			[null, '', '7'],
			[null, '[DONE]', '7'],
		])
		// Forwarding every raw text gives back the stream, less the comment-only and data-less blocks.
		expect(frames.map((f) => f.raw).join('')).toBe(corpus.replace(': keepalive\n\n', '').replace('event: ping\n\n', ''))
	})

	it('should give the same frames however the text is split (every split point, and three pieces)', () => {
		const expected = whole(true)
		const split = (cuts: number[]) => {
			const p = createSseParser(true)
			const out: SseFrame[] = []
			let at = 0
			for (const c of [...cuts, corpus.length]) {
				out.push(...p.push(corpus.slice(at, c)))
				at = c
			}
			return [...out, ...p.end()]
		}
		for (let i = 0; i <= corpus.length; i++) expect(split([i])).toEqual(expected)
		for (let i = 0; i < corpus.length; i += 7) for (let j = i; j < corpus.length; j += 11) expect(split([i, j])).toEqual(expected)
	})

	it('should leave out raw text unless asked, and give none to a last frame the stream did not end', () => {
		expect(whole(false).every((f) => f.raw === undefined)).toBe(true)
		const p = createSseParser(true)
		expect(p.push('data: a\n\ndata: cut')).toEqual([{ data: 'a', raw: 'data: a\n\n' }])
		expect(p.end()).toEqual([{ data: 'cut' }])
	})

	it('should read batches from a stream reader, one per chunk that completes frames', async () => {
		const te = new TextEncoder()
		const body = new ReadableStream<Uint8Array>({
			start(c) {
				for (const part of ['data: 1\n\nda', 'ta: 2\n', '\ndata: 3\n\ndata: 4']) c.enqueue(te.encode(part))
				c.close()
			},
		})
		const it = sseBatchReader(body)
		const batches: string[][] = []
		for (let r = await it.next(); !r.done; r = await it.next()) batches.push(r.value.map((f) => f.data))
		expect(batches).toEqual([['1'], ['2', '3'], ['4']])
	})

	it('should count the reads asked and answered (what the idle watch compares), and give the frames one by one', async () => {
		const te = new TextEncoder()
		const body = new ReadableStream<Uint8Array>({
			start(c) {
				for (const part of ['data: 1\n\nda', 'ta: 2\n\n']) c.enqueue(te.encode(part))
				c.close()
			},
		})
		const it = sseBatchReader(body)
		const pending = it.next()
		expect([it.asked, it.got]).toEqual([1, 0]) // a read waits on the body
		await pending
		expect(it.asked).toBe(it.got)
		expect((await collect(eachFrame(it))).map((f) => (f as SseFrame).data)).toEqual(['2'])
		expect(it.ended).toBe(true)
		expect([it.asked, it.got]).toEqual([3, 3])
	})

	describe('bytesOf', () => {
		const te = new TextEncoder()
		/** Each read's frames and what bytesOf gives for them (the text of the bytes, or undefined). */
		const reads = async (...parts: (string | Uint8Array)[]) => {
			const body = new ReadableStream<Uint8Array>({
				start(c) {
					for (const p of parts) c.enqueue(typeof p === 'string' ? te.encode(p) : p)
					c.close()
				},
			})
			const it = sseBatchReader(body)
			const out: Array<{ data: string[]; bytes: string | undefined }> = []
			for (let r = await it.next(); !r.done; r = await it.next()) {
				const bytes = it.bytesOf(r.value)
				out.push({ data: r.value.map((f) => f.data), bytes: bytes && new TextDecoder().decode(bytes) })
			}
			return out
		}

		it("should give a read's own bytes when it held exactly whole frames", async () => {
			expect(await reads('data: 1\n\nevent: e\ndata: é\n\n', 'data: 3\n\n')).toEqual([
				{ data: ['1', 'é'], bytes: 'data: 1\n\nevent: e\ndata: é\n\n' },
				{ data: ['3'], bytes: 'data: 3\n\n' },
			])
		})

		it('should give none for a read that began or ended inside a frame', async () => {
			expect(await reads('data: 1\n\nda', 'ta: 2\n\n', 'data: 3\n\n')).toEqual([
				{ data: ['1'], bytes: undefined },
				{ data: ['2'], bytes: undefined },
				{ data: ['3'], bytes: 'data: 3\n\n' },
			])
			// A character split between two reads: the second begins inside the first's frame.
			const bytes = te.encode('data: héllo\n\ndata: x\n\n')
			expect(await reads(bytes.slice(0, 8), bytes.slice(8))).toEqual([{ data: ['héllo', 'x'], bytes: undefined }])
		})

		it('should give none when the read held text that no frame carries', async () => {
			// A comment and a stray blank line are dropped by the parser: the bytes are more than the frames.
			expect(await reads(': keepalive\n\ndata: 1\n\n', '\ndata: 2\n\n')).toEqual([
				{ data: ['1'], bytes: undefined },
				{ data: ['2'], bytes: undefined },
			])
			// The decoder drops a leading byte-order mark.
			expect(await reads(new Uint8Array([0xef, 0xbb, 0xbf, ...te.encode('data: 1\n\n')]))).toEqual([{ data: ['1'], bytes: undefined }])
		})

		it("should give none for frames other than the last read's", async () => {
			const body = new ReadableStream<Uint8Array>({
				start(c) {
					c.enqueue(te.encode('data: 1\n\n'))
					c.close()
				},
			})
			const it = sseBatchReader(body)
			const r = await it.next()
			if (r.done) throw new Error('no batch')
			expect(it.bytesOf([...r.value])).toBeUndefined()
			expect(it.bytesOf(r.value)).toBeDefined()
		})
	})
})

describe('sseBatchReader onEnd', () => {
	const body = (text: string) =>
		new ReadableStream<Uint8Array>({
			start(c) {
				c.enqueue(new TextEncoder().encode(text))
				c.close()
			},
		})

	it('should call it once when the body ends, after the last frames were read', async () => {
		const it = sseBatchReader(body('data: a\n\ndata: b\n\n'))
		let ended = 0
		it.onEnd = () => ended++
		const first = await it.next()
		expect(first.value?.map((f) => f.data)).toEqual(['a', 'b'])
		expect(ended).toBe(0)
		expect((await it.next()).done).toBe(true)
		await it.return()
		expect(ended).toBe(1)
	})

	it('should call it when the reader is given up before the end', async () => {
		const it = sseBatchReader(body('data: a\n\n'))
		let ended = 0
		it.onEnd = () => ended++
		await it.return()
		expect(ended).toBe(1)
		expect(it.ended).toBe(true)
	})
})
