/**
 * Claude Code 2.1.197 (`claude -p`, ANTHROPIC_BASE_URL at the gateway, an `sk-…` key) on Claude served by Bedrock
 * (InvokeModel) and Vertex AI (rawPredict) channels, replaying what it sent when it was run so against the mocks: its
 * betas (Anthropic's own among them: `claude-code-20250219`, `thinking-token-count-2026-05-13`,
 * `prompt-caching-scope-2026-01-05`), its attribution line as the system prompt's first block, adaptive thinking with
 * `output_config.effort` (Sonnet 4.6) or a thinking budget (Haiku 4.5), `context_management`, `metadata.user_id` as a
 * JSON object, tools with a `$schema`, a streamed turn, a tool round trip with its signed thinking sent back.
 * Through the gateway each endpoint (model and method) is refused for its betas once, and every later call goes with
 * what the cloud takes; Bedrock gets no attribution line, which it refuses as a reserved keyword.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, countWords, startBedrockMock, startVertexMock, type VertexMock } from '../../mocks'
import { type Account, expectCharges, type Matrix, PRICE, SETUP_MS, startMatrix } from './harness'

const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEMOCKSESSIONTOKEN' }
/** The names Claude Code was given (ANTHROPIC_MODEL, ANTHROPIC_SMALL_FAST_MODEL), each cloud's own. */
const MODELS = {
	bedrock: { sonnet: 'cc-sonnet-br', haiku: 'cc-haiku-br' },
	vertex: { sonnet: 'cc-sonnet-vx', haiku: 'cc-haiku-vx' },
}
const BR_IDS = { [MODELS.bedrock.sonnet]: 'us.anthropic.claude-sonnet-4-6-v1:0', [MODELS.bedrock.haiku]: 'us.anthropic.claude-haiku-4-5-20251001-v1:0' }
const VX_IDS = { [MODELS.vertex.sonnet]: 'claude-sonnet-4-6', [MODELS.vertex.haiku]: 'claude-haiku-4-5@20251001' }

/** As sent by 2.1.197 to a Sonnet 4.6 name, and to a Haiku 4.5 name (no effort; its own order). */
const SONNET_BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,effort-2025-11-24'
const HAIKU_BETAS = 'interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,claude-code-20250219'
/** What both clouds keep of them (the rest refused: Bedrock "invalid beta flag", Vertex "Unexpected value(s) …"). */
const SONNET_KEPT = ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'effort-2025-11-24']
const HAIKU_KEPT = ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27']

const ATTRIBUTION = { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197.a5a; cc_entrypoint=sdk-cli;' }
const SYSTEM = [
	ATTRIBUTION,
	{ type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK.", cache_control: { type: 'ephemeral' } },
	{ type: 'text', text: 'You are an interactive agent that helps users with software engineering tasks.', cache_control: { type: 'ephemeral' } },
]
const USER_ID = JSON.stringify({ device_id: '30ed8811e47397f6c672f5c710fa6353a31c7679d8ae4796d92270eb99f2271c', account_uuid: '', session_id: '43452feb-a4be-41ef-be62-75f93045af5f' })
const REMINDER = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# currentDate\nToday's date is 2026-11-30.\n</system-reminder>\n"
const READ = {
	name: 'Read',
	description: 'Reads a file from the local filesystem.',
	input_schema: {
		$schema: 'https://json-schema.org/draft/2020-12/schema',
		type: 'object',
		properties: { file_path: { description: 'The absolute path to the file to read', type: 'string' }, offset: { type: 'integer', minimum: 0, maximum: 9007199254740991 } },
		required: ['file_path'],
		additionalProperties: false,
	},
}
const FILE = '/work/project/hello.txt'

type Block = Record<string, any>
type Message = { role: 'user' | 'assistant'; content: Block[] }

/** Claude Code's body for the model: Sonnet 4.6 thinks adaptively with an effort, Haiku 4.5 with a budget. */
const body = (model: string, haiku: boolean, messages: Message[]) => ({
	model,
	max_tokens: 32000,
	...(haiku ? { thinking: { type: 'enabled', budget_tokens: 31999 } } : { thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }),
	context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
	metadata: { user_id: USER_ID },
	stream: true,
	system: SYSTEM,
	messages,
	tools: [READ],
})

let m: Matrix
let br: BedrockMock
let vx: VertexMock
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: 'unused-key', iam: IAM, region: 'us-east-1', models: Object.values(BR_IDS) })
	vx = await startVertexMock({ project: 'proj-cc', region: 'us-east5', expressKey: 'AQ.unused' })
	const names = [...Object.keys(BR_IDS), ...Object.keys(VX_IDS)]
	for (const name of names) PRICE[name] = { input: 3, output: 15 }
	const iam = `${IAM.accessKeyId}:${IAM.secretAccessKey}:${IAM.sessionToken}`
	m = await startMatrix({
		models: names.map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 })),
		channels: (): GatewayConfig['channels'] => [
			{ name: 'cc-br', type: 'bedrock', base_url: br.url, api_key: iam, models: Object.keys(BR_IDS), model_map: BR_IDS, settings: { region: 'us-east-1' } },
			{ name: 'cc-vx', type: 'vertex', base_url: vx.url, api_key: vx.key.json, models: Object.keys(VX_IDS), model_map: VX_IDS, settings: { region: 'us-east5' } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
	await vx.stop()
})

type Recorded = { path: string; headers: Record<string, string>; body: Record<string, any> }
const CLOUDS = {
	bedrock: {
		calls: () => (br.requests as Recorded[]).filter((r) => r.path.includes('/invoke')),
		betas: (r: Recorded) => r.body.anthropic_beta as string[],
	},
	vertex: {
		calls: () => (vx.requests as Recorded[]).filter((r) => /:(stream)?rawPredict$/i.test(r.path)),
		betas: (r: Recorded) => r.headers['anthropic-beta']!.split(','),
	},
} as const

/** One streamed turn as Claude Code reads it: the assistant message it keeps, and the usage it saw. */
async function turn(acct: Account, model: string, haiku: boolean, messages: Message[]) {
	const client = new Anthropic({
		apiKey: acct.key,
		baseURL: m.app.url,
		maxRetries: 0,
		defaultHeaders: { 'anthropic-beta': haiku ? HAIKU_BETAS : SONNET_BETAS, 'x-app': 'cli', 'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)' },
	})
	const stream = client.beta.messages.stream(body(model, haiku, messages) as never)
	const msg = await stream.finalMessage()
	return { content: msg.content as unknown as Block[], usage: msg.usage, stop: msg.stop_reason }
}

for (const cloud of ['bedrock', 'vertex'] as const)
	describe(`Claude Code 2.1.197 through a ${cloud} channel`, () => {
		const { calls, betas } = CLOUDS[cloud]

		it('should answer a session of turns, a tool round trip among them, with one refused call per endpoint, billed as the client saw', async () => {
			const acct = await m.account()
			const before = calls().length
			const model = MODELS[cloud].sonnet
			const first: Message = { role: 'user', content: [{ type: 'text', text: REMINDER }, { type: 'text', text: 'What is two plus two?', cache_control: { type: 'ephemeral' } }] }
			const a = await turn(acct, model, false, [first])
			expect(a.content.map((b) => b.type)).toEqual(['thinking', 'text'])
			expect(a.content[1]!.text).toBe(`Hello! You said: ${REMINDER} What is two plus two?`)

			// Its next prompt asks for a tool; the signed thinking of each answer goes back as it came.
			const ask: Message = { role: 'user', content: [{ type: 'text', text: `#call Read {"file_path": "${FILE}"}` }] }
			const history: Message[] = [first, { role: 'assistant', content: a.content }, ask]
			const b = await turn(acct, model, false, history)
			expect(b.stop).toBe('tool_use')
			const use = b.content.find((x) => x.type === 'tool_use')!
			expect(use).toMatchObject({ name: 'Read', input: { file_path: FILE } })
			history.push({ role: 'assistant', content: b.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '1\thello from the file\n' }] })
			const c = await turn(acct, model, false, history)
			expect(c.content.at(-1)!.text).toBe('Tool results: 1\thello from the file\n')

			// A side task on the small model: its endpoint learns apart.
			const h = await turn(acct, MODELS[cloud].haiku, true, [first])
			expect(h.content.at(-1)!.text).toBe(`Hello! You said: ${REMINDER} What is two plus two?`)

			const sent = calls().slice(before)
			// Sonnet: refused once with what Claude Code named, then three turns with what the cloud keeps; Haiku the same, once.
			expect(sent.map(betas)).toEqual([[...SONNET_BETAS.split(',')], SONNET_KEPT, SONNET_KEPT, SONNET_KEPT, [...HAIKU_BETAS.split(',')], HAIKU_KEPT])
			for (const r of sent) {
				// Claude Code's fields reach the cloud as sent: both document them for these models.
				expect(r.body.context_management).toEqual({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] })
				expect(r.body.metadata).toEqual({ user_id: USER_ID })
				expect(r.body.tools[0].input_schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
				// Bedrock refuses the attribution line as a reserved keyword; Vertex gets the system prompt as sent.
				expect(r.body.system).toEqual(cloud === 'bedrock' ? SYSTEM.slice(1) : SYSTEM)
			}
			expect(sent.slice(0, 4).map((r) => r.body.output_config)).toEqual(Array(4).fill({ effort: 'high' }))
			expect(sent[5]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 31999 })

			// One usage row per turn (none for the refused calls), the tokens the client saw, the balance down by their cost.
			await expectCharges(
				m,
				acct,
				[a, b, c, h].map((t, i) => ({ model: i === 3 ? MODELS[cloud].haiku : model, input: t.usage.input_tokens, output: t.usage.output_tokens, stream: true })),
			)
		})

		it("should count its prompt's tokens with the cloud's own counter (as its /context does), attribution line and all", async () => {
			const acct = await m.account()
			const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': SONNET_BETAS } })
			const { model: _m, stream: _s, max_tokens: _x, metadata: _u, ...count } = body(MODELS[cloud].sonnet, false, [{ role: 'user', content: [{ type: 'text', text: 'count me' }] }])
			const before = (cloud === 'bedrock' ? br : vx).requests.length
			const { data, response } = await client.beta.messages.countTokens({ model: MODELS[cloud].sonnet, ...count } as never).withResponse()
			// Counted by the cloud, not estimated after a refusal.
			expect(response.headers.get('x-switchboard-counted-by')).toBe(cloud)
			const systemWords = SYSTEM.slice(cloud === 'bedrock' ? 1 : 0).reduce((n, b) => n + countWords(b.text), 0)
			expect(data.input_tokens).toBe(systemWords + countWords('count me'))
			const sent = (cloud === 'bedrock' ? br : vx).requests.slice(before) as Recorded[]
			expect(sent).toHaveLength(1)
			if (cloud === 'bedrock') expect(JSON.parse(Buffer.from(sent[0]!.body.input.invokeModel.body, 'base64').toString('utf8')).system).toEqual(SYSTEM.slice(1))
		})
	})
