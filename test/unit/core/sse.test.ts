import { describe, expect, it } from 'bun:test'
import { formatSse, parseSse } from '../../../src/core/sse'

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
