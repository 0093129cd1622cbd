/**
 * Files Claude's code execution tool writes, through the gateway, with the official `@anthropic-ai/sdk` against the
 * Anthropic mock (test/mocks/anthropic/code-execution.ts): the answer (whole or streamed) names them in its tool
 * results, and `client.beta.files.retrieveMetadata` / `download` / `list` / `delete` then work for the account it
 * answered and answer 404 to any other, as for an upload; a later request reusing the answer's `container` goes to the
 * channel that ran it, and another account's is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { CONTAINER_DAYS, purgeContainers } from '../../../src/modules/anthropic-files/outputs'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, type VendorMock } from '../../mocks'
import { CHART_BYTES } from '../../mocks/anthropic/code-execution'

let holding: VendorMock
let other: VendorMock
let app: TestApp

// `holding` (priority 1) serves haiku and opus; `other` (priority 0) opus, so opus goes to `other` first unless
// something pins it. Haiku can only run on `holding`.
const config = (a: string, b: string): GatewayConfig => ({
	channels: [
		{ name: 'holding', type: 'anthropic', base_url: a, api_key: 'up-a', models: ['claude-haiku-4-5', 'claude-opus-5'], priority: 1 },
		{ name: 'other', type: 'anthropic', base_url: b, api_key: 'up-b', models: ['claude-opus-5'], priority: 0 },
	],
	models: [
		{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5 },
		{ name: 'claude-opus-5', input_per_mtok: 5, output_per_mtok: 25 },
	],
})

beforeAll(async () => {
	holding = await startAnthropicMock({ apiKey: 'up-a' })
	other = await startAnthropicMock({ apiKey: 'up-b' })
	app = await startTestApp({ config: config(holding.url, other.url) })
}, 60_000)

afterAll(async () => {
	await app.close()
	await holding.stop()
	await other.stop()
})

const failure = (p: Promise<unknown>) =>
	p.then(
		() => undefined,
		(e) => e as InstanceType<typeof Anthropic.APIError>,
	)

async function client() {
	const a = await app.account(5)
	return new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 })
}

const BASH: Anthropic.Beta.BetaToolUnion = { type: 'code_execution_20250825', name: 'code_execution' }
const PYTHON: Anthropic.Beta.BetaToolUnion = { type: 'code_execution_20250522', name: 'code_execution' }
const chart = (model = 'claude-haiku-4-5', tool: Anthropic.Beta.BetaToolUnion = BASH): Anthropic.Beta.MessageCreateParamsNonStreaming => ({
	model,
	max_tokens: 200,
	tools: [tool],
	messages: [{ role: 'user', content: 'plot the sales #chart' }],
	betas: [tool === BASH ? 'code-execution-2025-08-25' : 'code-execution-2025-05-22'],
})

/** The file ids the message's code execution tool results name, as Anthropic's docs read them. */
function writtenFiles(msg: Anthropic.Beta.BetaMessage): string[] {
	const ids: string[] = []
	for (const block of msg.content)
		if ((block.type === 'bash_code_execution_tool_result' || block.type === 'code_execution_tool_result') && 'content' in block.content)
			for (const out of block.content.content) ids.push(out.file_id)
	return ids
}

/** Downloads a file through the SDK: its bytes and content type. */
async function download(c: Anthropic, id: string) {
	const res = await c.beta.files.download(id)
	return { bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') }
}

describe('files written by code execution', () => {
	it('should let the account retrieve, list, download and delete a file a whole answer names, and give any other a 404', async () => {
		const owner = await client()
		const msg = await owner.beta.messages.create(chart())
		const [id] = writtenFiles(msg)
		expect(id).toStartWith('file_')
		expect(msg.container?.id).toStartWith('container_')

		expect(await owner.beta.files.retrieveMetadata(id!)).toMatchObject({ id, type: 'file', filename: 'chart.png', mime_type: 'image/png', size_bytes: CHART_BYTES.length, downloadable: true })
		expect(await download(owner, id!)).toEqual({ bytes: CHART_BYTES, type: 'image/png' })
		const listed = (await owner.beta.files.list()).data
		expect(listed).toEqual([expect.objectContaining({ id, filename: 'chart.png', downloadable: true })])

		const stranger = await client()
		for (const e of await Promise.all([stranger.beta.files.retrieveMetadata(id!), stranger.beta.files.download(id!), stranger.beta.files.delete(id!)].map(failure))) {
			expect(e?.status).toBe(404)
			expect(e?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: `File not found: ${id}` } })
		}
		expect((await stranger.beta.files.list()).data).toEqual([])

		expect(await owner.beta.files.delete(id!)).toEqual({ id: id!, type: 'file_deleted' })
		expect((await failure(owner.beta.files.retrieveMetadata(id!)))?.status).toBe(404)
	})

	it('should list a written file with its metadata before anyone retrieved it', async () => {
		const owner = await client()
		const [id] = writtenFiles(await owner.beta.messages.create(chart()))
		const page = await owner.beta.files.list()
		expect(page.data).toEqual([{ id: id!, type: 'file', filename: 'chart.png', mime_type: 'image/png', size_bytes: CHART_BYTES.length, created_at: expect.any(String), downloadable: true }])
	})

	it('should record the files a stream names before they reach the client, the stream relayed as the vendor sent it', async () => {
		const owner = await client()
		for (const tool of [BASH, PYTHON]) {
			holding.reset()
			const stream = owner.beta.messages.stream(chart('claude-haiku-4-5', tool))
			// Downloaded as soon as the tool result arrives, while the stream is still open.
			let early: Promise<{ bytes: Uint8Array; type: string | null }> | undefined
			stream.on('streamEvent', (e) => {
				if (e.type === 'content_block_start' && e.content_block.type.endsWith('code_execution_tool_result')) {
					const block = e.content_block as Anthropic.Beta.BetaBashCodeExecutionToolResultBlock | Anthropic.Beta.BetaCodeExecutionToolResultBlock
					if ('content' in block.content) early = download(owner, block.content.content[0]!.file_id)
				}
			})
			const msg = await stream.finalMessage()
			const [id] = writtenFiles(msg)
			expect(id).toStartWith('file_')
			expect(msg.content.map((b) => b.type)).toEqual(['server_tool_use', tool === BASH ? 'bash_code_execution_tool_result' : 'code_execution_tool_result', 'text'])
			expect(msg.container?.id).toStartWith('container_')
			expect(await early).toEqual({ bytes: CHART_BYTES, type: 'image/png' })
			expect((await owner.beta.files.retrieveMetadata(id!)).filename).toBe('chart.png')
			expect((await failure((await client()).beta.files.download(id!)))?.status).toBe(404)
		}
	})

	it('should pass the stream through byte for byte', async () => {
		const owner = await client()
		const res = await fetch(`${app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'x-api-key': owner.apiKey!, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'code-execution-2025-08-25', 'content-type': 'application/json' },
			body: JSON.stringify({ ...chart(), betas: undefined, stream: true }),
		})
		const relayed = await res.text()
		expect(relayed).toContain('"type":"bash_code_execution_tool_result"')
		expect(relayed).toContain('"container":{"id":"container_')
		// The vendor's frames, unchanged (its ids are random per call, so they are compared with the ids masked).
		const direct = await fetch(`${holding.url}/v1/messages`, {
			method: 'POST',
			headers: { 'x-api-key': 'up-a', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'code-execution-2025-08-25', 'content-type': 'application/json' },
			body: JSON.stringify({ ...chart(), betas: undefined, stream: true }),
		})
		const mask = (s: string) => s.replace(/(file|container)_[0-9a-f]{24}/g, '$1_X').replace(/"expires_at":"[^"]+"/g, '"expires_at":"T"')
		expect(mask(relayed)).toBe(mask(await direct.text()))
	})

	it("should send a request reusing a container to the channel that ran it, and refuse another account's", async () => {
		const owner = await client()
		// Haiku runs on `holding` only; opus would go to `other` first.
		const first = await owner.beta.messages.create(chart())
		const container = first.container!.id
		holding.reset()
		other.reset()
		const again = await owner.beta.messages.create({ ...chart('claude-opus-5'), container })
		expect(again.container?.id).toBe(container)
		expect(holding.requests.filter((r) => r.path === '/v1/messages').length).toBe(1)
		expect(other.requests.some((r) => r.path === '/v1/messages')).toBe(false)
		// The object form, streamed, with a file the code wrote sent back into the container.
		const [written] = writtenFiles(first)
		const stream = owner.beta.messages.stream({
			...chart('claude-opus-5'),
			container: { id: container },
			messages: [{ role: 'user', content: [{ type: 'container_upload', file_id: written! }, { type: 'text', text: 'plot it again #chart' }] }],
		})
		expect((await stream.finalMessage()).container?.id).toBe(container)
		expect(other.requests.some((r) => r.path === '/v1/messages')).toBe(false)

		const stranger = await client()
		const e = await failure(stranger.beta.messages.create({ ...chart('claude-opus-5'), container }))
		expect(e?.status).toBe(404)
		expect(e?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: `container: Container not found: ${container}` } })
		expect(holding.requests.filter((r) => r.path === '/v1/messages').length).toBe(2)
		expect(other.requests.some((r) => r.path === '/v1/messages')).toBe(false)
	})

	it('should tell a model the container’s channel does not serve that it cannot reuse it', async () => {
		const owner = await client()
		// Opus goes to `other` first: its container is there, and haiku is not.
		const first = await owner.beta.messages.create(chart('claude-opus-5'))
		expect(other.requests.some((r) => r.path === '/v1/messages')).toBe(true)
		const e = await failure(owner.beta.messages.create({ ...chart(), container: first.container!.id }))
		expect(e?.status).toBe(400)
		expect((e?.error as { error: { message: string } }).error.message).toContain(`container: the container ${first.container!.id} was created by the Anthropic channel that ran its code, and model "claude-haiku-4-5" is not served there`)
	})

	it('should forget a container no answer named for 30 days, and keep one an answer reused since', async () => {
		const owner = await client()
		const idle = (await owner.beta.messages.create(chart())).container!.id
		const reused = (await owner.beta.messages.create(chart())).container!.id
		const recorded = async (id: string) => (await app.svc.db.sql.query("SELECT id FROM tasks WHERE kind = 'anthropic_container' AND upstream_id = $1", [id])).length
		// Both last named 31 days ago; then an answer reuses one.
		await app.svc.db.sql.query("UPDATE tasks SET updated_at = now() - interval '31 days' WHERE kind = 'anthropic_container' AND upstream_id IN ($1, $2)", [idle, reused])
		expect((await owner.beta.messages.create({ ...chart(), container: reused })).container?.id).toBe(reused)
		expect(await purgeContainers(app.svc.db)).toBe(1)
		expect(await recorded(idle)).toBe(0)
		expect(await recorded(reused)).toBe(1)
		// A stranger is still refused the one kept, until it too has gone unnamed for the container lifetime.
		expect((await failure((await client()).beta.messages.create({ ...chart(), container: reused })))?.status).toBe(404)
		expect(await purgeContainers(app.svc.db, CONTAINER_DAYS, Date.now() + (CONTAINER_DAYS + 1) * 86_400_000)).toBeGreaterThanOrEqual(1)
		expect(await recorded(reused)).toBe(0)
	})
})
