/**
 * The channel Test button: one real, minimal call (one output token) through the channel's own adapter, with its
 * decrypted key, answering what happened in words. Administrative, so not billed.
 */
import { asc, eq } from 'drizzle-orm'
import { badRequest, GatewayError } from '../../../core/errors'
import { type channels, models } from '../../../db/schema'
import { apiKeySource, hostIdentityProblem } from '../../../providers/channel-key'
import { adaptersReady, chatAdapterFor } from '../../../providers/registry'
import { upstreamError } from '../../../providers/upstream-error'
import type { ChannelType } from '../../../providers/channel-types'
import { fetchUpstream } from '../../../relay/upstream-fetch'
import { redactKey } from '../../../routing/attempts'
import { matchesModel } from '../../../routing/catalog'
import type { Services } from '../../../services'
import { servedBy } from '../../console/endpoints'

type Row = typeof channels.$inferSelect

/** A chat model by the vendors' naming on this type of channel, as the Models page tells them (not an embedding, audio or image model, which a chat call is refused for). */
const isChat = (type: string, upstreamName: string) => servedBy(upstreamName, [type as ChannelType]).endpoints.includes('POST /v1/chat/completions')

/**
 * The model to call: the one asked for, else a chat model the channel serves as it is (a `model_map` key or an exact
 * entry), else a priced chat model (one with an output price) that its globs match, else the first name it serves as
 * it is. Never a glob itself: the vendor would answer it 404 and report a healthy channel as broken; nor, while a chat
 * model is at hand, an embedding model listed first (Gemini answers `gemini-embedding-001` 404 for generateContent).
 */
export async function testModel(svc: Services, row: Row, wanted?: string): Promise<string> {
	if (wanted) return wanted
	const map = row.modelMap ?? {}
	const named = [...Object.keys(map), ...row.models.filter((m) => !m.includes('*'))]
	const chat = named.find((m) => isChat(row.type, map[m] ?? m))
	if (chat) return chat
	const priced = await svc.db.orm.select({ name: models.name, output: models.outputPerMtok }).from(models).where(eq(models.status, 'enabled')).orderBy(asc(models.name))
	const hit = priced.find((m) => m.output > 0 && matchesModel(row.models, m.name) && isChat(row.type, m.name))
	if (hit) return hit.name
	if (named[0]) return named[0]
	throw badRequest(`channel "${row.name}" lists only patterns (${row.models.join(', ')}) and no priced model matches them: name the model to test, as {"model": "…"}`, 'model')
}

export async function testChannel(svc: Services, row: Row, wanted?: string) {
	const channelAdapter = chatAdapterFor(row.type as ChannelType)
	// Before a model is looked for: such a channel has no model to test either.
	// Nothing is called, so nothing failed: `testable: false` lets the console say so rather than report a failure.
	if (!channelAdapter)
		return {
			ok: false,
			testable: false,
			status: 0,
			latency_ms: 0,
			model: wanted ?? row.models[0]!,
			message: `channels of type ${row.type} have no chat endpoint, so the Test call cannot check them: nothing was sent`,
		}
	const model = await testModel(svc, row, wanted)
	const apiKey = await svc.cipher.decrypt(row.apiKeyEnc)
	// A channel stored through the management API before the host-identity rule is tested no more than it is used
	// (routing/stored-identity-check.ts): nothing of the host's goes off its cloud for a Test call either.
	if (row.source === 'api') {
		const problem = await hostIdentityProblem({ type: row.type, apiKey, baseUrl: row.baseUrl, settings: row.settings ?? {}, models: row.models, modelMap: row.modelMap ?? {} }, svc.env.ambientEndpoints)
		if (problem) throw badRequest(`${problem.param}: ${problem.reason}`, problem.param)
	}
	const started = Date.now()
	const done = (ok: boolean, status: number, message: string) => ({ ok, testable: true, status, latency_ms: Date.now() - started, model, message })
	const ch = {
		id: row.id,
		name: row.name,
		type: row.type as ChannelType,
		baseUrl: row.baseUrl.replace(/\/+$/, ''),
		apiKey,
		models: row.models,
		modelMap: row.modelMap ?? {},
		priority: row.priority,
		weight: row.weight,
		settings: row.settings ?? {},
		// As the catalog loads it: a key stored through the management API is parsed as such (google/credentials.ts).
		keySource: row.source === 'api' ? apiKeySource(svc.env.ambientEndpoints) : undefined,
	}
	const upstreamModel = ch.modelMap[model] ?? model
	// A Bedrock application inference profile's model, asked of Bedrock when the channel does not say it (bounded).
	await adaptersReady([ch], model, svc.log)
	// A vendor with a protocol per model (Vertex AI: Claude's or Gemini's) is tested in the model's.
	const adapter = channelAdapter.forModel?.(upstreamModel, ch) ?? channelAdapter
	const body = adapter.protocol.encodeRequest({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Say OK.' }] }], maxTokens: 1, stream: false }, upstreamModel)
	const url = adapter.chatUrl(ch, upstreamModel, false)
	try {
		const { res } = await fetchUpstream(url, { headers: adapter.headers(ch), body: JSON.stringify(body), ch, adapter }, { firstByteMs: 30_000, idleMs: 30_000 }, AbortSignal.timeout(35_000))
		const text = await res.text()
		if (!res.ok) {
			// The administrator testing the channel is shown what the vendor said (callers only get the gateway's own
			// words for a refused key), with the channel's key cut out as in the log. A 404 also names the URL called
			// (without its query): Anthropic answers a base URL given with /v1 (/v1/v1/messages) with "Not Found" alone.
			const err = upstreamError(res.status, text, null)
			const where = res.status === 404 ? URL.parse(url) : null
			const called = where ? ` (POST ${where.origin}${where.pathname})` : ''
			return done(false, res.status, redactKey(`${err.detail ?? err.message}${called}`, ch.apiKey))
		}
		const r = adapter.protocol.decodeResponse(JSON.parse(text))
		const answer = r.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
		return done(true, res.status, `OK: the upstream answered${answer ? ` "${answer.slice(0, 200)}"` : ''} (stop reason ${r.stopReason})`)
	} catch (e) {
		return done(false, 0, e instanceof GatewayError ? redactKey(e.detail ?? e.message, ch.apiKey) : `the call failed: ${(e as Error).message}`)
	}
}
