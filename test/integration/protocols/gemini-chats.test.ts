/**
 * `@google/genai`'s chat sessions (`ai.chats.create`) against models of every vendor. A chat keeps its history only
 * when every chunk of a streamed answer is valid (candidates, content, at least one part, no empty part) and one of
 * them carries finishReason; otherwise it drops the answer and the question that asked for it, and the next message
 * goes without them. It then sends each chunk's content back as its own model turn, which the gateway must read as
 * one answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

/** The text of the conversation the upstream got, one line per message, in the vendor's own shape. */
function upstreamTexts(up: Upstream): string[] {
	const body = lastRequest(m.mocks[up]).body
	const text = (c: unknown): string =>
		typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (p as { text?: string }).text ?? '').join('') : ''
	if (up === 'gemini') return (body.contents as Array<{ role: string; parts: unknown[] }>).map((c) => `${c.role}: ${text(c.parts)}`)
	return (body.messages as Array<{ role: string; content: unknown }>).filter((x) => x.role !== 'system').map((x) => `${x.role}: ${text(x.content)}`)
}

const answer = (text: string) => `Hello! You said: ${text}`

/** Consecutive lines of the same role (`role: text`) as one: a chat sends each streamed chunk as its own model turn. */
const merged = (lines: string[]) =>
	lines.reduce<string[]>((acc, line) => {
		const role = line.slice(0, line.indexOf(': ') + 2)
		const last = acc[acc.length - 1]
		if (last?.startsWith(role)) acc[acc.length - 1] = last + line.slice(role.length)
		else acc.push(line)
		return acc
	}, [])

for (const up of UPSTREAMS) {
	describe(`@google/genai chat session, ${up} upstream`, () => {
		for (const stream of [false, true]) {
			it(`should keep both turns in the history and send the first with the second${stream ? ' (streamed)' : ''}`, async () => {
				const acct = await m.account()
				const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
				const chat = ai.chats.create({ model: MODEL[up] })
				const send = async (message: string) => {
					if (!stream) return (await chat.sendMessage({ message })).text
					let text = ''
					for await (const c of await chat.sendMessageStream({ message })) text += c.text ?? ''
					return text
				}
				expect(await send('first question')).toBe(answer('first question'))
				expect(await send('second question')).toBe(answer('second question'))
				const model = (role: string) => (role === 'user' ? 'user' : 'model')
				const history = chat.getHistory(true).map((c) => `${model(c.role ?? '')}: ${(c.parts ?? []).map((p) => p.text ?? '').join('')}`)
				expect(merged(history)).toEqual([
					'user: first question',
					`model: ${answer('first question')}`,
					'user: second question',
					`model: ${answer('second question')}`,
				])
				// Gemini gets the turns as the chat sent them (the same-protocol path relays the body as written).
				const assistant = up === 'gemini' ? 'model' : 'assistant'
				if (process.env.SHOW) console.log(JSON.stringify(lastRequest(m.mocks[up]).body.messages ?? lastRequest(m.mocks[up]).body.contents))
				expect(merged(upstreamTexts(up))).toEqual(['user: first question', `${assistant}: ${answer('first question')}`, 'user: second question'])
			})
		}
	})
}
