/**
 * The channel Test button: one real, minimal call (one output token) through the channel's own adapter, with its
 * decrypted key, answering what happened in words. Administrative, so not billed.
 */
import { GatewayError } from '../../../core/errors'
import type { channels } from '../../../db/schema'
import { chatAdapterFor } from '../../../providers/registry'
import { upstreamError } from '../../../providers/upstream-error'
import type { ChannelType } from '../../../providers/channel-types'
import { fetchUpstream } from '../../../relay/upstream-fetch'
import type { Services } from '../../../services'

type Row = typeof channels.$inferSelect

export async function testChannel(svc: Services, row: Row, wanted?: string) {
	const model = wanted ?? Object.keys(row.modelMap ?? {})[0] ?? row.models.find((m) => !m.includes('*')) ?? row.models[0]!
	const started = Date.now()
	const done = (ok: boolean, status: number, message: string) => ({ ok, status, latency_ms: Date.now() - started, model, message })
	const adapter = chatAdapterFor(row.type as ChannelType)
	if (!adapter) return done(false, 0, `channels of type ${row.type} have no chat endpoint to test`)
	const ch = {
		id: row.id,
		name: row.name,
		type: row.type as ChannelType,
		baseUrl: row.baseUrl.replace(/\/+$/, ''),
		apiKey: await svc.cipher.decrypt(row.apiKeyEnc),
		models: row.models,
		modelMap: row.modelMap ?? {},
		priority: row.priority,
		weight: row.weight,
		settings: row.settings ?? {},
	}
	const upstreamModel = ch.modelMap[model] ?? model
	const body = adapter.protocol.encodeRequest({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Say OK.' }] }], maxTokens: 1, stream: false }, upstreamModel)
	try {
		const { res } = await fetchUpstream(adapter.chatUrl(ch, upstreamModel, false), { headers: adapter.headers(ch), body: JSON.stringify(body) }, { firstByteMs: 30_000, idleMs: 30_000 }, AbortSignal.timeout(35_000))
		const text = await res.text()
		if (!res.ok) return done(false, res.status, upstreamError(res.status, text, null).message)
		const r = adapter.protocol.decodeResponse(JSON.parse(text))
		const answer = r.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
		return done(true, res.status, `OK: the upstream answered${answer ? ` "${answer.slice(0, 200)}"` : ''} (stop reason ${r.stopReason})`)
	} catch (e) {
		return done(false, 0, e instanceof GatewayError ? e.message : `the call failed: ${(e as Error).message}`)
	}
}
