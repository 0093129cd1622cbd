/**
 * Anthropic's betas on Bedrock and Vertex (src/providers/platform-betas.ts). Claude Code names betas of Anthropic's own
 * API (`claude-code-20250219`, `prompt-caching-scope-2026-01-05`…) that the clouds refuse, the whole request with
 * them: Bedrock 400 "invalid beta flag", Vertex 400 "Unexpected value(s) `…` for the `anthropic-beta` header". Through
 * the gateway such a client's request still reaches Claude on those channels, with the betas the cloud takes; an
 * Anthropic channel gets every beta as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, startBedrockMock, startVertexMock, type VertexMock } from '../../mocks'
import { type Matrix, PRICE, SETUP_MS, startMatrix } from './harness'

/** What Claude Code 2.1 sends (claude-code-cli.test.ts), and the tool search beta in Anthropic's name. */
const CLAUDE_CODE_BETAS = [
	'claude-code-20250219',
	'interleaved-thinking-2025-05-14',
	'context-management-2025-06-27',
	'prompt-caching-scope-2026-01-05',
	'effort-2025-11-24',
	'advanced-tool-use-2025-11-20',
]
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEMOCKSESSIONTOKEN' }
const PROFILE = 'us.anthropic.claude-sonnet-4-6-v1:0'
const VERTEX_ID = 'claude-sonnet-4-5@20250929'

/** Each model on a channel of its own: what a channel learnt stays its own. */
const BR = 'claude-betas-br'
const BR_NONE = 'claude-betas-br-none'
const VX = 'claude-betas-vx'
const DIRECT = 'claude-betas-direct'
const ALL = [BR, BR_NONE, VX, DIRECT]

let m: Matrix
let br: BedrockMock
let vx: VertexMock
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: 'unused-key', iam: IAM, region: 'us-east-1', models: [PROFILE] })
	vx = await startVertexMock({ project: 'proj-betas', region: 'us-east5', expressKey: 'AQ.unused' })
	for (const name of ALL) PRICE[name] = { input: 3, output: 15 }
	const iam = `${IAM.accessKeyId}:${IAM.secretAccessKey}:${IAM.sessionToken}`
	m = await startMatrix({
		models: ALL.map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 })),
		channels: (mocks): GatewayConfig['channels'] => [
			{ name: 'betas-br', type: 'bedrock', base_url: br.url, api_key: iam, models: [BR], model_map: { [BR]: PROFILE }, settings: { region: 'us-east-1' } },
			{ name: 'betas-br-none', type: 'bedrock', base_url: br.url, api_key: iam, models: [BR_NONE], model_map: { [BR_NONE]: PROFILE }, settings: { region: 'us-east-1' } },
			{ name: 'betas-vx', type: 'vertex', base_url: vx.url, api_key: vx.key.json, models: [VX], model_map: { [VX]: VERTEX_ID }, settings: { region: 'us-east5' } },
			{ name: 'betas-direct', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [DIRECT], model_map: { [DIRECT]: 'claude-sonnet-4-6' } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
	await vx.stop()
})

type Recorded = { path: string; headers: Record<string, string>; body: Record<string, any> }
const invokes = () => (br.requests as Recorded[]).filter((r) => r.path.includes('/invoke'))
const predicts = () => (vx.requests as Recorded[]).filter((r) => r.path.includes('RawPredict') || r.path.includes('rawPredict'))

async function ask(model: string, stream: boolean) {
	const acct = await m.account()
	const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': CLAUDE_CODE_BETAS.join(',') } })
	const body = { model, max_tokens: 64, messages: [{ role: 'user' as const, content: 'betas' }] }
	const msg = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body)
	return msg.content.map((b) => (b.type === 'text' ? b.text : b.type))
}

describe('Claude Code betas on Bedrock', () => {
	it('should reach Claude with the betas Bedrock documents, tool search in its name there, and send them so from then on', async () => {
		const before = invokes().length
		expect(await ask(BR, false)).toEqual(['Hello! You said: betas'])
		const sent = invokes().slice(before)
		// The first call as asked (in Bedrock's names), refused; the second with what AWS documents.
		expect(sent.map((r) => r.body.anthropic_beta)).toEqual([
			['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'prompt-caching-scope-2026-01-05', 'effort-2025-11-24', 'tool-search-tool-2025-10-19'],
			['interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'effort-2025-11-24', 'tool-search-tool-2025-10-19'],
		])
		const again = invokes().length
		expect(await ask(BR, false)).toEqual(['Hello! You said: betas'])
		expect(invokes().slice(again).map((r) => r.body.anthropic_beta)).toEqual([['interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'effort-2025-11-24', 'tool-search-tool-2025-10-19']])
	})

	it('should stream with the betas Bedrock takes, learnt apart for the stream endpoint', async () => {
		const before = invokes().length
		expect(await ask(BR, true)).toEqual(['Hello! You said: betas'])
		const sent = invokes().slice(before)
		expect(sent.map((r) => r.path.endsWith('/invoke-with-response-stream'))).toEqual([true, true])
		expect(sent[1]!.body.anthropic_beta).toEqual(['interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'effort-2025-11-24', 'tool-search-tool-2025-10-19'])
	})

	it('should send no beta to a model that takes none (as Opus 4.7 on Bedrock)', async () => {
		br.betas = new Set()
		try {
			const before = invokes().length
			expect(await ask(BR_NONE, false)).toEqual(['Hello! You said: betas'])
			const sent = invokes().slice(before)
			expect(sent.length).toBe(3)
			expect(sent[2]!.body.anthropic_beta).toBeUndefined()
			// Learnt: the next request goes once, with none.
			const again = invokes().length
			await ask(BR_NONE, false)
			expect(invokes().slice(again).map((r) => r.body.anthropic_beta)).toEqual([undefined])
		} finally {
			br.reset()
		}
	})
})

describe('Claude Code betas on Vertex', () => {
	it('should drop what Vertex names, once, and leave it out from then on', async () => {
		const before = predicts().length
		expect(await ask(VX, false)).toEqual(['Hello! You said: betas'])
		const sent = predicts().slice(before)
		expect(sent.map((r) => r.headers['anthropic-beta'])).toEqual([
			'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,prompt-caching-scope-2026-01-05,effort-2025-11-24,tool-search-tool-2025-10-19',
			'interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24,tool-search-tool-2025-10-19',
		])
		const again = predicts().length
		await ask(VX, false)
		expect(predicts().slice(again).map((r) => r.headers['anthropic-beta'])).toEqual(['interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24,tool-search-tool-2025-10-19'])
	})

	it('should make a call refused for anything else once, and pass the refusal on', async () => {
		const acct = await m.account()
		const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } })
		const before = predicts().length
		vx.faultOnce = { status: 400, googleStatus: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' }
		const err = await client.messages.create({ model: VX, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect(predicts().length - before).toBe(1)
	})
})

describe('a system message mid-conversation (Claude Code 2.1)', () => {
	const BODY = (model: string) => ({
		model,
		max_tokens: 64,
		system: [{ type: 'text', text: 'you are a coding agent' }],
		messages: [
			{ role: 'user', content: 'first' },
			{ role: 'system', content: 'the user switched to plan mode' },
			{ role: 'assistant', content: 'ok' },
			{ role: 'user', content: 'betas' },
		],
	})
	for (const [name, model, sent] of [
		['Bedrock', BR, () => invokes()],
		['Vertex', VX, () => predicts()],
	] as const)
		it(`should go to the system prompt on ${name}, which does not take its beta`, async () => {
			const acct = await m.account()
			const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'claude-code-20250219,mid-conversation-system-2026-04-07' } })
			const before = sent().length
			const r = await client.messages.create(BODY(model) as never)
			expect(r.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello! You said: betas'])
			const last = sent().slice(before).at(-1)!
			expect(last.body.messages.map((x: { role: string }) => x.role)).toEqual(['user', 'assistant', 'user'])
			expect(last.body.system).toEqual([
				{ type: 'text', text: 'you are a coding agent' },
				{ type: 'text', text: 'the user switched to plan mode' },
			])
		})
})

describe('Anthropic channels', () => {
	it('should get every beta as the client sent it', async () => {
		const before = m.mocks.anthropic.requests.length
		expect(await ask(DIRECT, false)).toEqual(['Hello! You said: betas'])
		const r = m.mocks.anthropic.requests.slice(before).find((x) => x.path === '/v1/messages')
		expect(r?.headers['anthropic-beta']).toBe(CLAUDE_CODE_BETAS.join(','))
	})
})
