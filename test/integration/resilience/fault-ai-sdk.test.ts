/**
 * The Vercel AI SDK's view of upstream faults (fault-matrix.test.ts has the official SDKs'): `streamText` through
 * each of its providers for the gateway's four protocols (@ai-sdk/openai chat and Responses, @ai-sdk/anthropic,
 * @ai-sdk/google) × each vendor. A stream the upstream cut or failed after content yields an `error` part and finishes
 * with reason `error`, never `stop`; a failure before any byte is an error part with the gateway's 502 and no text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createOpenAI } from '@ai-sdk/openai'
import { APICallError, type LanguageModel, streamText } from 'ai'
import type { Fault } from '../../mocks'
import { type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS, usageRows } from '../protocols/harness'

// The SDK warns on stderr about model names it does not know (ours are aliases).
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const PROVIDERS = ['openai.chat', 'openai.responses', 'anthropic', 'google'] as const

function modelFor(p: (typeof PROVIDERS)[number], key: string, name: string): LanguageModel {
	if (p === 'openai.chat') return createOpenAI({ apiKey: key, baseURL: `${m.app.url}/v1` }).chat(name)
	if (p === 'openai.responses') return createOpenAI({ apiKey: key, baseURL: `${m.app.url}/v1` }).responses(name)
	if (p === 'anthropic') return createAnthropic({ apiKey: key, baseURL: `${m.app.url}/v1` })(name)
	return createGoogleGenerativeAI({ apiKey: key, baseURL: `${m.app.url}/v1beta` })(name)
}

const PROMPT = 'one two three four five six seven eight nine ten'
const ANSWER = `Hello! You said: ${PROMPT}`

const CASES: Array<{ name: string; fault: Fault; content: boolean; status: number; endReason: string }> = [
	{ name: 'a stream cut after content', fault: { kind: 'cut', afterChunks: 5 }, content: true, status: 200, endReason: 'upstream_cut' },
	{ name: "the vendor's error event after content", fault: { kind: 'midstream', afterChunks: 5 }, content: true, status: 200, endReason: 'error' },
	{ name: 'an HTTP 500 before any byte', fault: { kind: 'status', status: 500 }, content: false, status: 502, endReason: 'error' },
]

for (const p of PROVIDERS)
	describe(`the AI SDK's ${p} provider`, () => {
		for (const up of UPSTREAMS)
			for (const c of CASES)
				it(`should yield an error and no clean finish after ${c.name} (${up} upstream)`, async () => {
					const acct = await m.account()
					m.mocks[up].faultOnce = c.fault
					const r = streamText({ model: modelFor(p, acct.key, MODEL[up]), prompt: PROMPT, maxRetries: 0, onError: () => {} })
					let text = ''
					const errors: unknown[] = []
					const finishes: string[] = []
					for await (const part of r.fullStream) {
						if (part.type === 'text-delta') text += part.text
						else if (part.type === 'error') errors.push(part.error)
						else if (part.type === 'finish') finishes.push(part.finishReason)
					}
					expect(errors).toHaveLength(1)
					if (c.content) {
						expect(text.length).toBeGreaterThan(0)
						expect(ANSWER.startsWith(text) && text !== ANSWER).toBe(true)
						expect(finishes).toEqual(['error'])
					} else {
						expect(text).toBe('')
						expect(APICallError.isInstance(errors[0]) && errors[0].statusCode).toBe(c.status)
						expect(finishes).toEqual([])
					}
					const rows = await usageRows(m, acct.accountId)
					expect(rows.map((x) => [x.status, x.end_reason])).toEqual([[c.status, c.endReason]])
				})
	})
