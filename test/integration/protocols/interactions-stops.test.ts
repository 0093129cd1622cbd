/**
 * Stop sequences of a Gemini Interactions request (`generation_config.stop_sequences`) beyond what the upstream takes
 * (OpenAI chat 4, none on its reasoning models, Gemini `generateContent` 5, as the mocks enforce with the vendors'
 * 400s): the vendor is sent what it takes and the gateway cuts the answer at the rest, whole and streamed, as it does
 * for chat callers (stop-sequences.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { type Account, CAPPED, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'
import { countWords } from '../../mocks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

/** Six sequences: the one that matches is the last, beyond OpenAI's four and Gemini's five. */
const STOPS = ['<a>', '<b>', '<c>', '<d>', '<e>', 'STOP']
const USER = 'count for me #stop'
const CUT = `Hello! You said: ${USER} one two `

type Case = { name: string; up: Upstream; model: string; sent: (b: Record<string, any>) => unknown; expected: unknown }
const CASES: Case[] = [
	{ name: 'an OpenAI model', up: 'openai', model: MODEL.openai, sent: (b) => b.stop, expected: STOPS.slice(0, 4) },
	{ name: 'an OpenAI reasoning model', up: 'openai', model: CAPPED.openai, sent: (b) => 'stop' in b, expected: false },
	{ name: 'a Gemini model', up: 'gemini', model: MODEL.gemini, sent: (b) => b.generationConfig?.stopSequences, expected: STOPS.slice(0, 5) },
]

type Event = { event_type: string; delta?: Record<string, any>; interaction?: Record<string, any> }

for (const c of CASES)
	describe(`Interactions stop sequences to ${c.name}`, () => {
		it('should send what the vendor takes and cut the whole answer at the rest', async () => {
			const acct = await m.account()
			const i = (await genai(acct).interactions.create({ model: c.model, input: USER, generation_config: { stop_sequences: STOPS } } as never)) as unknown as Record<string, any>
			expect(c.sent(lastRequest(m.mocks[c.up]).body)).toEqual(c.expected)
			expect(i.status).toBe('completed')
			const text = (i.steps as Array<Record<string, any>>).filter((s) => s.type === 'model_output').flatMap((s) => s.content.map((p: { text: string }) => p.text)).join('')
			expect(text).toBe(CUT)
			// The vendor generated the whole answer: its usage.
			await expectCharges(m, acct, [{ model: c.model, input: countWords(USER), output: countWords(`${CUT}STOP three`) }])
		})

		it('should cut the streamed answer at the rest', async () => {
			const acct = await m.account()
			const events: Event[] = []
			for await (const e of (await genai(acct).interactions.create({ model: c.model, input: USER, stream: true, generation_config: { stop_sequences: STOPS } } as never)) as unknown as AsyncIterable<Event>) events.push(e)
			expect(c.sent(lastRequest(m.mocks[c.up]).body)).toEqual(c.expected)
			expect(events.filter((e) => e.event_type === 'step.delta' && e.delta?.type === 'text').map((e) => e.delta!.text).join('')).toBe(CUT)
			expect(events.at(-1)).toMatchObject({ event_type: 'interaction.completed', interaction: { status: 'completed' } })
		})
	})
