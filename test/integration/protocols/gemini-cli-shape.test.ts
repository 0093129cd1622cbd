/**
 * Gemini CLI 0.61.0 (`npx @google/gemini-cli -p … -m MODEL`, with `GEMINI_API_KEY=sk-…` and
 * `GOOGLE_GEMINI_BASE_URL={root}`) as it was recorded on the wire against the gateway, replayed with fetch: its headers
 * (`GeminiCLI-tui/…` user agent, `x-goog-api-client` of @google/genai, `x-goog-api-key`), `:streamGenerateContent?alt=sse`
 * with a first user content that has no `role`, the long system instruction, its tools as `parametersJsonSchema` and
 * `temperature 1 / topP 0.95 / topK 64` with `thinkingConfig` (`includeThoughts` only for a name it does not know,
 * `thinkingBudget` 8192 for Gemini 2.5, `thinkingLevel: HIGH` for Gemini 3, `thinkingBudget: 0` for its side tasks);
 * `:countTokens` for a prompt with an `@file` image; and the errors it shows (a model not on the key's list, an empty
 * balance, an unknown model, a vendor's 429, whose wait it reads only from `google.rpc.RetryInfo`).
 * The CLI itself is not a dependency: the shapes are captured here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { parseSse } from '../../../src/core/sse'
import { pngOf } from '../../helpers/png'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, type Upstream, UPSTREAMS, usageRows } from './harness'

/**
 * A name the CLI asks for itself (its `auto` router and session summaries ask `gemini-3.5-flash-lite`), served by a
 * Gemini 2.5 model through `model_map`, as an operator serves the CLI's names with the models it has.
 */
const ROUTER = 'gemini-3.5-flash-lite'
const ROUTER_UPSTREAM = 'gemini-2.5-flash-lite'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [{ name: 'ch-router', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [ROUTER], model_map: { [ROUTER]: ROUTER_UPSTREAM } }],
		models: [{ name: ROUTER, input_per_mtok: 0.1, output_per_mtok: 0.4 }],
	})
}, SETUP_MS)
afterAll(() => m.close())

/** Its installation id, sent unless `privacy.usageStatisticsEnabled` is false: for the gateway, never for the vendor. */
const INSTALLATION_ID = '305c9673-3bb4-41ee-9a23-5da98f24d6f1'

/** The headers Gemini CLI 0.61.0 sent (Node 20 on Linux), the model name in its user agent. */
const cliHeaders = (key: string, model: string): Record<string, string> => ({
	accept: '*/*',
	'accept-language': '*',
	'content-type': 'application/json',
	'sec-fetch-mode': 'cors',
	'user-agent': `GeminiCLI-tui/0.61.0/${model} (linux; x64; terminal)`,
	'x-gemini-api-privileged-user-id': INSTALLATION_ID,
	'x-goog-api-client': 'google-genai-sdk/1.30.0 gl-node/v20.20.2',
	'x-goog-api-key': key,
})

/** Three of its tools, as declared (descriptions shortened). */
const TOOLS = [
	{
		functionDeclarations: [
			{
				name: 'read_file',
				description: 'Reads and returns the content of a specified file.',
				parametersJsonSchema: {
					type: 'object',
					properties: {
						file_path: { description: 'The path to the file to read.', type: 'string' },
						start_line: { description: 'Optional: The 1-based line number to start reading from.', type: 'integer', minimum: 1 },
						end_line: { description: 'Optional: The 1-based line number to end reading at (inclusive).', type: 'integer', minimum: 1 },
					},
					required: ['file_path'],
				},
			},
			{
				name: 'run_shell_command',
				description: 'This tool executes a given shell command as `bash -c <command>`.',
				parametersJsonSchema: {
					type: 'object',
					properties: {
						command: { type: 'string', description: 'Exact bash command to execute as `bash -c <command>`' },
						description: { type: 'string', description: 'Brief description of the command for the user.' },
						dir_path: { type: 'string', description: '(OPTIONAL) The path of the directory to run the command in.' },
						is_background: { type: 'boolean', description: 'Set to true if this command should be run in the background.' },
						delay_ms: { type: 'integer', description: 'Optional. Delay in milliseconds to wait after starting the process in the background.' },
					},
					required: ['command'],
				},
			},
			{
				name: 'google_web_search',
				description: 'Performs a web search using Google Search (via the Gemini API) and returns the results.',
				parametersJsonSchema: { type: 'object', properties: { query: { type: 'string', description: 'The search query to find information on the web.' } }, required: ['query'] },
			},
		],
	},
]

const SYSTEM = { parts: [{ text: 'You are a non-interactive CLI agent specializing in software engineering tasks.' }] }
const CONTEXT = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Monday.\n</session_context>"
const GENERATION = { temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true } }

type Content = { role?: string; parts: Array<Record<string, any>> }

/** The CLI's first content: the session context and the prompt as two text parts, with no `role`. */
const firstTurn = (prompt: string): Content => ({ parts: [{ text: CONTEXT }, { text: prompt }] })

const body = (contents: Content[], generationConfig: Record<string, unknown> = GENERATION) => ({ contents, systemInstruction: SYSTEM, tools: TOOLS, generationConfig })

async function post(acct: Pick<Account, 'key'>, model: string, method: string, payload: unknown): Promise<Response> {
	const query = method === 'streamGenerateContent' ? '?alt=sse' : ''
	return fetch(`${m.app.url}/v1beta/models/${model}:${method}${query}`, { method: 'POST', headers: cliHeaders(acct.key, model), body: JSON.stringify(payload) })
}

type Streamed = { parts: Array<Record<string, any>>; usage: Record<string, number>; finish?: string }

/** One streamed turn read as the CLI reads it: every chunk's parts in order, the last usage, the finish reason. */
async function stream(acct: Account, model: string, contents: Content[], generationConfig?: Record<string, unknown>): Promise<Streamed> {
	const res = await post(acct, model, 'streamGenerateContent', body(contents, generationConfig))
	expect(res.status).toBe(200)
	expect(res.headers.get('content-type')).toContain('text/event-stream')
	const out: Streamed = { parts: [], usage: {} }
	for await (const frame of parseSse(res.body!)) {
		const chunk = JSON.parse(frame.data)
		expect(chunk.error).toBeUndefined()
		const cand = chunk.candidates?.[0]
		out.parts.push(...(cand?.content?.parts ?? []))
		if (cand?.finishReason) out.finish = cand.finishReason
		if (chunk.usageMetadata) out.usage = chunk.usageMetadata
	}
	return out
}

const textOf = (s: Streamed) =>
	s.parts
		.filter((p) => !p.thought)
		.map((p) => p.text ?? '')
		.join('')
const thoughtsOf = (s: Streamed) =>
	s.parts
		.filter((p) => p.thought)
		.map((p) => p.text ?? '')
		.join('')

describe('Gemini CLI 0.61 shapes', () => {
	for (const up of UPSTREAMS) {
		it(`should stream a one-shot answer and bill the usage it shows (${up})`, async () => {
			const acct = await m.account()
			const s = await stream(acct, MODEL[up], [firstTurn('Say hi')])
			expect(textOf(s)).toBe(`Hello! You said: ${CONTEXT} Say hi`)
			expect(s.finish).toBe('STOP')
			// The CLI shows thoughts (includeThoughts) from Gemini and Claude; gpt-4o-mini does not reason.
			if (up !== 'openai') expect(thoughtsOf(s)).toBe(`Let me think about ${CONTEXT} Say hi.`)
			const rows = await usageRows(m, acct.accountId)
			expect(rows).toHaveLength(1)
			expect(rows[0]!.input_tokens).toBe(s.usage.promptTokenCount!)
			expect(rows[0]!.output_tokens).toBe(s.usage.candidatesTokenCount! + (s.usage.thoughtsTokenCount ?? 0))
			expect(rows[0]!.stream).toBe(true)
			const sent = lastRequest(m.mocks[up]).headers
			expect(Object.values(sent)).not.toContain(INSTALLATION_ID)
			expect(Object.values(sent)).not.toContain(acct.key)
		})

		it(`should run the CLI's read_file round trip (${up})`, async () => {
			const acct = await m.account()
			const ask = firstTurn('#call read_file {"file_path":"notes.txt"}')
			const first = await stream(acct, MODEL[up], [ask])
			const calls = first.parts.filter((p) => p.functionCall)
			expect(calls).toHaveLength(1)
			const call = calls[0]!
			expect(call.functionCall.name).toBe('read_file')
			expect(call.functionCall.args).toEqual({ file_path: 'notes.txt' })
			expect(first.finish).toBe('STOP')
			// The CLI keeps the call (not the thoughts) with its signature, or puts its validator-skip on it when it has none.
			const id = call.functionCall.id ?? 'read_file_1795998200843_0'
			const kept = { functionCall: { id, args: call.functionCall.args, name: 'read_file' }, thoughtSignature: call.thoughtSignature ?? 'skip_thought_signature_validator' }
			const answer = { functionResponse: { name: 'read_file', response: { output: 'hello notes\n' }, id } }
			const second = await stream(acct, MODEL[up], [ask, { parts: [kept], role: 'model' }, { parts: [answer], role: 'user' }])
			expect(textOf(second)).toBe('Tool results: hello notes\n')
			if (up === 'anthropic') {
				const sent = lastRequest(m.mocks.anthropic).body.messages as Array<{ role: string; content: Array<Record<string, any>> }>
				expect(sent.at(-1)!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: id })
			}
			if (up === 'openai') expect((lastRequest(m.mocks.openai).body.messages as Array<Record<string, any>>).at(-1)).toMatchObject({ role: 'tool', tool_call_id: id })
			expect(await usageRows(m, acct.accountId)).toHaveLength(2)
		})

		it(`should count the tokens of a prompt with an @file image (${up})`, async () => {
			const acct = await m.account()
			const png = Buffer.from(pngOf(16, 16)).toString('base64')
			const parts = [
				{ text: 'What is in @pic.png ?' },
				{ text: '\n--- Content from referenced files ---' },
				{ inlineData: { data: png, mimeType: 'image/png' } },
				{ text: '\n--- End of content ---' },
			]
			const count = async (p: typeof parts) => {
				const res = await post(acct, MODEL[up], 'countTokens', { contents: [{ role: 'user', parts: p }] })
				expect(res.status).toBe(200)
				return ((await res.json()) as { totalTokens: number }).totalTokens
			}
			const withImage = await count(parts)
			const textOnly = await count(parts.filter((p) => !('inlineData' in p)))
			expect(textOnly).toBeGreaterThan(0)
			// The image as each vendor counts it: the mocks 85 an image; gpt-4o-mini 2833 + 5667 a 512-pixel tile (one here).
			expect(withImage - textOnly).toBe(up === 'openai' ? 2833 + 5667 : 85)
			expect(await usageRows(m, acct.accountId)).toHaveLength(0)
		})
	}

	it("should carry the CLI's Gemini 2.5 thinkingBudget to Claude's budget_tokens", async () => {
		const acct = await m.account()
		await stream(acct, MODEL.anthropic, [firstTurn('Say hi')], { ...GENERATION, thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } })
		expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 })
	})

	it("should carry the CLI's Gemini 3 thinkingLevel HIGH to OpenAI's reasoning_effort", async () => {
		const acct = await m.account()
		await stream(acct, THINKER.openai, [firstTurn('Say hi')], { ...GENERATION, thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' } })
		expect(lastRequest(m.mocks.openai).body.reasoning_effort).toBe('high')
	})

	it("should give a Gemini 2.5 model serving a Gemini 3 name the CLI's thinkingLevel as a budget (2.5 refuses levels)", async () => {
		const acct = await m.account()
		// The CLI's model router call, as sent (its schema's types uppercase, as Google's Type enum writes them).
		const schema = {
			type: 'OBJECT',
			properties: {
				complexity_reasoning: { type: 'STRING', description: 'Brief explanation for the score.' },
				complexity_score: { type: 'INTEGER', description: 'Complexity score from 1-100.' },
			},
			required: ['complexity_reasoning', 'complexity_score'],
		}
		const thinkingConfig = { includeThoughts: true, thinkingLevel: 'HIGH' }
		const generationConfig = { temperature: 1, topP: 0.95, topK: 64, responseMimeType: 'application/json', responseJsonSchema: schema, thinkingConfig }
		const res = await post(acct, ROUTER, 'generateContent', { contents: [{ role: 'user', parts: [{ text: 'Say hi' }] }], systemInstruction: SYSTEM, generationConfig })
		expect(res.status).toBe(200)
		const answer = (await res.json()) as { candidates: Array<{ content: { parts: Array<{ text?: string; thought?: boolean }> } }> }
		const text = answer.candidates[0]!.content.parts.filter((p) => !p.thought).map((p) => p.text).join('')
		expect(JSON.parse(text)).toEqual({ complexity_reasoning: 'Say hi', complexity_score: 42 })
		const sent = lastRequest(m.mocks.gemini)
		expect(sent.path).toBe(`/v1beta/models/${ROUTER_UPSTREAM}:generateContent`)
		expect(sent.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 4096 })
		// The rest of the CLI's config as it was.
		expect(sent.body.generationConfig.responseJsonSchema).toEqual(schema)
	})

	it("should turn Claude's thinking off for the CLI's side tasks (thinkingBudget 0)", async () => {
		const acct = await m.account()
		const side = { contents: [{ role: 'user', parts: [{ text: 'complete this' }] }], generationConfig: { temperature: 0, thinkingConfig: { thinkingBudget: 0 } } }
		const res = await post(acct, MODEL.anthropic, 'generateContent', side)
		expect(res.status).toBe(200)
		expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'disabled' })
	})
})

describe('Gemini CLI 0.61 errors', () => {
	/** What the CLI shows: the body's `error` (it prints the JSON and exits with the code). */
	async function errorOf(res: Response): Promise<{ code: number; message: string; status: string; details?: Array<Record<string, unknown>> }> {
		const b = (await res.json()) as { error: { code: number; message: string; status: string } }
		expect(b.error.code).toBe(res.status)
		return b.error
	}

	it('should refuse a model not on the key’s list with 403 PERMISSION_DENIED naming it', async () => {
		const acct = await m.account()
		const r = await m.app.admin(`/api/tokens/${acct.tokenId}`, { method: 'PATCH', body: { allowed_models: [MODEL.openai] } })
		expect(r.status).toBe(200)
		const res = await post(acct, MODEL.anthropic, 'streamGenerateContent', body([firstTurn('Say hi')]))
		expect(res.status).toBe(403)
		const e = await errorOf(res)
		expect(e.status).toBe('PERMISSION_DENIED')
		expect(e.message).toContain(MODEL.anthropic)
	})

	it('should refuse an empty balance with 402, which the CLI does not retry (a 429 it retries ten times)', async () => {
		const acct = await m.account(0)
		m.mocks.gemini.reset()
		const res = await post(acct, MODEL.gemini, 'streamGenerateContent', body([firstTurn('Say hi')]))
		expect(res.status).toBe(402)
		const e = await errorOf(res)
		expect(e.status).toBe('RESOURCE_EXHAUSTED')
		expect(e.message).toContain('billing')
		expect(m.mocks.gemini.requests).toHaveLength(0)
	})

	it('should refuse a key past its spend limit with 402 saying so, not that the balance ran out', async () => {
		const acct = await m.account(10, { spend_limit: 0.000001 })
		const res = await post(acct, MODEL.gemini, 'streamGenerateContent', body([firstTurn('Say hi')]))
		expect(res.status).toBe(402)
		const e = await errorOf(res)
		expect(e.status).toBe('RESOURCE_EXHAUSTED')
		expect(e.message).toStartWith('API key spend limit reached')
		expect(e.message).toContain('billing')
		expect(e.message).not.toContain('insufficient balance')
	})

	it('should answer an unknown model with 404 NOT_FOUND (the CLI’s ModelNotFoundError)', async () => {
		const acct = await m.account()
		const res = await post(acct, 'no-such-model', 'streamGenerateContent', body([firstTurn('Say hi')]))
		expect(res.status).toBe(404)
		expect((await errorOf(res)).status).toBe('NOT_FOUND')
	})

	// The CLI reads how long to wait only from the body's google.rpc.RetryInfo (classifyGoogleError), never from
	// retry-after: without it a 429 is retried on its own backoff (5 s doubling to 30 s, ten tries) whatever the vendor
	// asked; with it the CLI waits at least that long, and stops at once (one request, "Suggested retry after 400s.") past 5 minutes.
	const RATE_LIMITED: Record<Upstream, { fault: NonNullable<Matrix['mocks']['openai']['fault']>; seconds: number }> = {
		openai: { fault: { kind: 'status', status: 429, retryAfterMs: 2_500 }, seconds: 3 },
		anthropic: { fault: { kind: 'status', status: 429, retryAfter: 12 }, seconds: 12 },
		gemini: { fault: { kind: 'status', status: 429 }, seconds: 37 },
	}
	for (const up of UPSTREAMS) {
		it(`should say a vendor's wait in RetryInfo as well as retry-after (${up})`, async () => {
			const acct = await m.account()
			m.mocks[up].fault = RATE_LIMITED[up].fault
			try {
				const res = await post(acct, MODEL[up], 'streamGenerateContent', body([firstTurn('Say hi')]))
				expect(res.status).toBe(429)
				const seconds = RATE_LIMITED[up].seconds
				expect(res.headers.get('retry-after')).toBe(String(seconds))
				const e = await errorOf(res)
				expect(e.status).toBe('RESOURCE_EXHAUSTED')
				expect(e.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }])
			} finally {
				m.mocks[up].fault = undefined
				for (const c of m.app.svc.catalog.channelsFor(MODEL[up])) m.app.svc.health.success(c.id)
			}
		})
	}
})
