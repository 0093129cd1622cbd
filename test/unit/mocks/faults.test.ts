import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'

import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

let m: VendorMock

beforeAll(async () => {
	m = await startOpenAIMock({ apiKey: 'k' })
})
afterAll(() => m.stop())
beforeEach(() => m.reset())

const chatBody = (stream: boolean) => JSON.stringify({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'one two three' }] })
const chat = (stream = false, signal?: AbortSignal) =>
	fetch(`${m.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: chatBody(stream), signal })

describe('mock faults', () => {
	it('should answer a status fault with the vendor error shape and retry-after', async () => {
		m.fault = { kind: 'status', status: 429, retryAfter: 7 }
		const r = await chat()
		expect(r.status).toBe(429)
		expect(r.headers.get('retry-after')).toBe('7')
		expect(await r.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } })
		expect((await chat()).status).toBe(429)
		m.fault = { kind: 'status', status: 503, body: 'upstream down' }
		expect(await (await chat()).text()).toBe('upstream down')
	})

	it('should apply faultOnce to the next request only', async () => {
		m.faultOnce = { kind: 'status', status: 500 }
		expect((await chat()).status).toBe(500)
		expect(m.faultOnce).toBeUndefined()
		expect((await chat()).status).toBe(200)
		expect(m.requests).toHaveLength(2)
	})

	it('should use each vendor own error shape for status faults', async () => {
		const a = await startAnthropicMock({ apiKey: 'k' })
		const g = await startGeminiMock({ apiKey: 'k' })
		try {
			a.fault = { kind: 'status', status: 529 }
			g.fault = { kind: 'status', status: 503 }
			const ar = await fetch(`${a.url}/v1/messages`, { method: 'POST' })
			expect(await ar.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
			const gr = await fetch(`${g.url}/v1beta/models/x:generateContent`, { method: 'POST' })
			expect(await gr.json()).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } })
		} finally {
			await a.stop()
			await g.stop()
		}
	})

	it('should cut a stream before its terminator, cleanly or abruptly', async () => {
		m.fault = { kind: 'cut', afterChunks: 2 }
		const text = await (await chat(true)).text()
		expect(text.split('\n\n').filter(Boolean)).toHaveLength(2)
		expect(text).not.toContain('[DONE]')
		m.fault = { kind: 'cut', afterChunks: 1000 }
		const all = await (await chat(true)).text()
		expect(all).toContain('"finish_reason":"stop"')
		expect(all).not.toContain('[DONE]')
		m.fault = { kind: 'cut', afterChunks: 2, abrupt: true }
		const r = await chat(true)
		expect(r.status).toBe(200)
		await expect(r.text()).rejects.toThrow()
		m.fault = { kind: 'cut', afterChunks: 0 }
		const half = await (await chat(false)).text()
		expect(() => JSON.parse(half)).toThrow()
		expect(half.length).toBeGreaterThan(10)
	})

	it('should send the vendor in-stream error event that each SDK raises on midstream', async () => {
		m.fault = { kind: 'midstream', afterChunks: 2 }
		const openai = new OpenAI({ apiKey: 'k', baseURL: m.url, maxRetries: 0 })
		const seen: string[] = []
		const consume = async () => {
			for await (const c of await openai.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'a b c' }] })) {
				seen.push(c.choices[0]?.delta.content ?? '')
			}
		}
		await expect(consume()).rejects.toThrow('The server had an error')
		expect(seen).toHaveLength(2)
		expect((await chat()).status).toBe(500)

		const a = await startAnthropicMock({ apiKey: 'k' })
		const g = await startGeminiMock({ apiKey: 'k' })
		try {
			a.fault = { kind: 'midstream', afterChunks: 3 }
			const claude = new Anthropic({ apiKey: 'k', baseURL: a.url, maxRetries: 0 })
			await expect(claude.messages.stream({ model: 'c', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()).rejects.toThrow('Overloaded')
			g.fault = { kind: 'midstream', afterChunks: 1 }
			const gemini = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: g.url, retryOptions: { attempts: 1 } } })
			const drain = async () => {
				for await (const _ of await gemini.models.generateContentStream({ model: 'x', contents: 'hi there' })) seen.push('g')
			}
			await expect(drain()).rejects.toThrow('overloaded')
			const array = await fetch(`${g.url}/v1beta/models/x:streamGenerateContent?key=k`, { method: 'POST', body: JSON.stringify({ contents: [{ parts: [{ text: 'a b' }] }] }) })
			const items = (await array.json()) as object[]
			expect(items[items.length - 1]).toMatchObject({ error: { code: 503 } })
		} finally {
			await a.stop()
			await g.stop()
		}
	})

	it('should send broken JSON with status 200 on malformed', async () => {
		m.fault = { kind: 'malformed' }
		const r = await chat()
		expect(r.status).toBe(200)
		await expect(r.json()).rejects.toThrow()
		const frames = (await (await chat(true)).text()).split('\n\n').filter(Boolean)
		expect(() => JSON.parse(frames[0].slice(6))).not.toThrow()
		expect(() => JSON.parse(frames[1].slice(6))).toThrow()
		expect(frames[frames.length - 1]).toBe('data: [DONE]')
	})

	it('should send an empty 200 body on empty', async () => {
		m.fault = { kind: 'empty' }
		const r = await chat(true)
		expect(r.status).toBe(200)
		expect(r.headers.get('content-type')).toContain('text/event-stream')
		expect(await r.text()).toBe('')
	})

	it('should delay the first byte on slow', async () => {
		m.faultOnce = { kind: 'slow', firstByteMs: 150 }
		const t0 = performance.now()
		const r = await chat()
		expect(performance.now() - t0).toBeGreaterThanOrEqual(140)
		expect(r.status).toBe(200)
	})

	it('should hang until the client aborts, and record the abort', async () => {
		m.fault = { kind: 'hang' }
		const ac = new AbortController()
		const pending = chat(false, ac.signal).catch((e: Error) => e.name)
		await Bun.sleep(50)
		expect(m.aborts).toHaveLength(0)
		ac.abort()
		expect(await pending).toBe('AbortError')
		await Bun.sleep(30)
		expect(m.aborts).toEqual([{ path: '/v1/chat/completions', at: expect.any(Number) }])
	})

	it('should record a client that leaves mid-stream, but not one that read everything', async () => {
		const slow = await startOpenAIMock({ apiKey: 'k', chunkDelayMs: 20 })
		try {
			const ac = new AbortController()
			const r = await fetch(`${slow.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: chatBody(true), signal: ac.signal })
			const reader = r.body!.getReader()
			await reader.read()
			ac.abort()
			await Bun.sleep(80)
			expect(slow.aborts).toHaveLength(1)
			const done = await fetch(`${slow.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: chatBody(true) })
			const t0 = performance.now()
			expect(await done.text()).toContain('[DONE]')
			expect(performance.now() - t0).toBeGreaterThanOrEqual(5 * 20 - 10)
			await Bun.sleep(30)
			expect(slow.aborts).toHaveLength(1)
		} finally {
			await slow.stop()
		}
	})

	it('should refuse connections until the fault is cleared, on the same port', async () => {
		const url = m.url
		m.fault = { kind: 'refuse' }
		await expect(chat()).rejects.toThrow()
		m.fault = undefined
		expect(m.url).toBe(url)
		expect((await chat()).status).toBe(200)
	})

	it('should drop exactly one connection on faultOnce refuse', async () => {
		m.faultOnce = { kind: 'refuse' }
		await expect(chat()).rejects.toThrow()
		await Bun.sleep(10)
		expect(m.faultOnce).toBeUndefined()
		expect((await chat()).status).toBe(200)
	})

	it('should stop cleanly while refusing', async () => {
		const x = await startGeminiMock({ apiKey: 'k' })
		x.fault = { kind: 'refuse' }
		await x.stop()
		x.fault = undefined
		await expect(fetch(`${x.url}/v1beta/models?key=k`)).rejects.toThrow()
	})
})

describe('mock options', () => {
	it('should skip recording when record is false', async () => {
		const x = await startOpenAIMock({ apiKey: 'k', record: false })
		try {
			await fetch(`${x.url}/models`, { headers: { authorization: 'Bearer k' } })
			expect(x.requests).toHaveLength(0)
		} finally {
			await x.stop()
		}
	})

	it('should wait delayMs before every response', async () => {
		const x = await startOpenAIMock({ apiKey: 'k', delayMs: 100 })
		try {
			const t0 = performance.now()
			await fetch(`${x.url}/models`, { headers: { authorization: 'Bearer k' } })
			expect(performance.now() - t0).toBeGreaterThanOrEqual(90)
		} finally {
			await x.stop()
		}
	})

	it('should serve only the configured models', async () => {
		const x = await startOpenAIMock({ apiKey: 'k', models: ['m1'] })
		try {
			const client = new OpenAI({ apiKey: 'k', baseURL: x.url, maxRetries: 0 })
			expect((await client.models.list()).data.map((d) => d.id)).toEqual(['m1'])
			const err = await client.chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.NotFoundError)
		} finally {
			await x.stop()
		}
	})
})
