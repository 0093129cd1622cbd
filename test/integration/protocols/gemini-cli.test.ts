/**
 * Gemini CLI 0.61 (`gemini -p … -m MODEL`) as it was seen on the wire, pointed at the gateway with a Claude or GPT
 * model: it calls `models.generateContentStream` of `@google/genai` with the whole history, `includeThoughts: true`
 * and its tools as `parametersJsonSchema`; it keeps no thought part in its history (geminiChat.ts filters
 * `!part.thought`), puts `skip_thought_signature_validator` on the first call of a model turn that has no signature
 * (`ensureActiveLoopHasThoughtSignatures`), and answers each call with a `functionResponse` carrying the call's id.
 * Its model router (`auto`) asks a flash-lite model with `responseJsonSchema` whose types are uppercase
 * (`Type.OBJECT`), which Gemini takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Content, type GenerateContentConfig, type GenerateContentResponse, GoogleGenAI, type Part } from '@google/genai'
import { thinkingSignature } from '../../mocks'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Up = 'anthropic' | 'openai'
const UPS: Up[] = ['anthropic', 'openai']

const SKIP = 'skip_thought_signature_validator'
const READ_FILE = {
	name: 'read_file',
	description: 'Reads and returns the content of a specified file.',
	parametersJsonSchema: {
		type: 'object',
		properties: { file_path: { description: 'The path to the file to read.', type: 'string' }, start_line: { description: 'Optional: the 1-based line to start reading from.', type: 'number' } },
		required: ['file_path'],
	},
}
const CONFIG: GenerateContentConfig = {
	systemInstruction: { role: 'user', parts: [{ text: 'You are Gemini CLI, an autonomous CLI agent specializing in software engineering tasks.' }] },
	tools: [{ functionDeclarations: [READ_FILE] }],
	temperature: 1,
	topP: 0.95,
	topK: 64,
	thinkingConfig: { includeThoughts: true },
}
const ASK = '#call read_file {"file_path":"notes.txt"}'
const thought = (text: string) => `Let me think about ${text}.`

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

/** One CLI turn: the stream read to its end, and the model content it keeps in its history. */
async function turn(acct: Account, model: string, contents: Content[]): Promise<{ thoughts: string; text: string; kept: Content }> {
	const chunks: GenerateContentResponse[] = []
	for await (const c of await genai(acct).models.generateContentStream({ model, contents: activeLoopSigned(contents), config: CONFIG })) chunks.push(c)
	const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
	const kept: Part[] = []
	for (const p of parts.filter((p) => !p.thought)) {
		const last = kept[kept.length - 1]
		if (last?.text !== undefined && !last.thought && p.text !== undefined && Object.keys(p).length === 1 && Object.keys(last).length === 1) last.text += p.text
		else kept.push({ ...p })
	}
	return {
		thoughts: parts.filter((p) => p.thought).map((p) => p.text ?? '').join(''),
		text: parts.filter((p) => !p.thought).map((p) => p.text ?? '').join(''),
		kept: { role: 'model', parts: kept },
	}
}

/** The CLI's `ensureActiveLoopHasThoughtSignatures`: since the last user text, the first call of each model turn is signed. */
function activeLoopSigned(contents: Content[]): Content[] {
	const start = contents.findLastIndex((c) => c.role === 'user' && c.parts?.some((p) => p.text) && !c.parts?.some((p) => p.functionResponse))
	return contents.map((c, i) => {
		if (i < start || c.role !== 'model') return c
		const at = c.parts!.findIndex((p) => p.functionCall)
		if (at < 0 || c.parts![at]!.thoughtSignature) return c
		return { ...c, parts: c.parts!.map((p, j) => (j === at ? { ...p, thoughtSignature: SKIP } : p)) }
	})
}

/** The assistant turns the upstream got in its last request: thinking and calls, in order. */
function upstreamAssistant(up: Up): unknown[][] {
	const messages = lastRequest(m.mocks[up]).body.messages as Array<Record<string, any>>
	return messages
		.filter((x) => x.role === 'assistant')
		.map((x) =>
			up === 'anthropic'
				? (x.content as Array<Record<string, any>>).map((b) => (b.type === 'thinking' ? ['thinking', b.thinking, b.signature] : b.type === 'tool_use' ? ['call', b.input] : [b.type]))
				: [...(x.reasoning_content ? [['thinking', x.reasoning_content]] : []), ...((x.tool_calls as Array<Record<string, any>>) ?? []).map((c) => ['call', JSON.parse(c.function.arguments)])],
		)
}

describe('Gemini CLI tool loop (history without thought parts)', () => {
	for (const up of UPS)
		// Without a budget an OpenAI reasoning model is sent no reasoning_effort, and Chat Completions shows no reasoning.
		it(up === 'anthropic' ? "should give Claude's thinking back on the tool-result turn, so thinking stays on" : 'should finish the loop on an OpenAI reasoning model', async () => {
			const acct = await m.account()
			const user: Content = { role: 'user', parts: [{ text: ASK }] }
			const one = await turn(acct, THINKER[up], [user])
			expect(one.thoughts).toBe(up === 'anthropic' ? thought(ASK) : '')
			const call = one.kept.parts!.find((p) => p.functionCall)!.functionCall!
			expect([call.name, call.args]).toEqual(['read_file', { file_path: 'notes.txt' }])

			const results: Content = { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: 'hello from notes\n' } } }] }
			const two = await turn(acct, THINKER[up], [user, one.kept, results])
			expect(two.text).toBe('Tool results: hello from notes\n')
			const given = up === 'anthropic' ? [['thinking', thought(ASK), thinkingSignature(thought(ASK))]] : []
			expect(upstreamAssistant(up)).toEqual([[...given, ['call', { file_path: 'notes.txt' }]]])
			if (up === 'anthropic') expect(lastRequest(m.mocks.anthropic).body.thinking?.type).toBe('enabled')
		})
})

/** The CLI's model router: a flash-lite model asked for a complexity score, its schema's types as `Type.*` gives them. */
const ROUTER: GenerateContentConfig = {
	systemInstruction: 'You are a specialized Task Routing AI. Respond *only* in JSON format according to the schema.',
	temperature: 1,
	topP: 0.95,
	topK: 64,
	responseMimeType: 'application/json',
	responseJsonSchema: {
		type: 'OBJECT',
		properties: { complexity_reasoning: { type: 'STRING', description: 'Brief explanation for the score.' }, complexity_score: { type: 'INTEGER', description: 'Complexity score from 1-100.' } },
		required: ['complexity_reasoning', 'complexity_score'],
	},
	thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' as never },
}

describe('Gemini CLI model router (responseJsonSchema with uppercase types)', () => {
	for (const up of UPS)
		it(`should send ${up} the schema with JSON Schema's type names, and answer JSON`, async () => {
			const acct = await m.account()
			const res = await genai(acct).models.generateContent({ model: MODEL[up], contents: [{ role: 'user', parts: [{ text: 'read package.json' }] }], config: ROUTER })
			expect(JSON.parse(res.text!)).toEqual({ complexity_reasoning: 'read package.json', complexity_score: 42 })
			const sent = JSON.stringify(lastRequest(m.mocks[up]).body)
			expect(sent).toContain('"complexity_score":{"type":"integer"')
			expect(sent).not.toMatch(/"(OBJECT|STRING|INTEGER)"/)
		})
})

/** A 1×1 PNG, as the CLI's read_file gives an image: a functionResponse, then the image as inlineData. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

describe('Gemini CLI countTokens of a tool result with media (calculateRequestTokenCount)', () => {
	for (const up of UPS)
		it(`should count a function response sent without its call, with the image after it, for ${up}`, async () => {
			const acct = await m.account()
			const result = { functionResponse: { id: 'read_file__toolu_1', name: 'read_file', response: { output: 'Binary content provided (1 item(s)).' } } }
			const image = { inlineData: { mimeType: 'image/png', data: PNG } }
			const counted = await genai(acct).models.countTokens({ model: MODEL[up], contents: [{ role: 'user', parts: [result, image] }] })
			// The same tool result in its conversation counts the same, less the question and the call.
			const call = { role: 'model', parts: [{ functionCall: { id: 'read_file__toolu_1', name: 'read_file', args: { file_path: 'dot.png' } } }] }
			const whole = await genai(acct).models.countTokens({ model: MODEL[up], contents: [{ role: 'user', parts: [{ text: 'read it' }] }, call, { role: 'user', parts: [result, image] }] })
			const textOnly = await genai(acct).models.countTokens({ model: MODEL[up], contents: [{ role: 'user', parts: [result] }] })
			expect(textOnly.totalTokens).toBeGreaterThan(0)
			expect(counted.totalTokens).toBeGreaterThan(textOnly.totalTokens!) // the image counts
			expect(counted.totalTokens).toBeLessThan(whole.totalTokens!)
		})
})
