/** Management API: upstream channels. Upstream keys are write-only (stored encrypted, never returned). */
import { desc, eq } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { assertAdmin } from '../../../auth/principal'
import { BaseUrl, ChannelSettings, guardrailProblem, Priority, Weight, unlistedMapKey, unlistedMapKeyMessage } from '../../../config/channel-settings'
import { GatewayError, badRequest, notFound } from '../../../core/errors'
import { channels } from '../../../db/schema'
import { channelKeyProblem } from '../../../providers/channel-key'
import { CHANNEL_TYPES } from '../../../providers/channel-types'
import type { Services } from '../../../services'
import { testChannel } from './test-call'
import { adminAuth } from '../auth'
import { renaming } from '../name-taken'
import { ErrorBody, IdParams, Int, iso, Name } from '../schemas'

const ChannelType = t.Union(CHANNEL_TYPES.map((c) => t.Literal(c)))

const Channel = t.Object({
	id: Int(),
	name: t.String(),
	type: t.String(),
	base_url: t.String(),
	models: t.Array(t.String()),
	model_map: t.Record(t.String(), t.String()),
	priority: Int(),
	weight: Int(),
	status: t.String({ description: 'enabled | disabled' }),
	disabled_reason: t.Union([t.String(), t.Null()]),
	source: t.String({ description: 'config (GATEWAY_CONFIG) | env (quick-start vendor variables: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID, AZURE_OPENAI_API_KEY or AZURE_CLIENT_ID, GOOGLE_APPLICATION_CREDENTIALS) | api' }),
	// Open in answers: a row stored before settings were checked must still be readable (and fixable by a PATCH).
	settings: t.Record(t.String(), t.Unknown(), { description: 'As set (see the request schema of POST /api/channels)' }),
	created_at: t.String({ format: 'date-time' }),
	updated_at: t.String({ format: 'date-time' }),
	health: t.Object(
		{
			state: t.String({ description: 'closed (healthy) | open (cooling down) | half_open (next request probes it)' }),
			consecutive_failures: Int(),
			open_until: t.Union([t.String({ format: 'date-time' }), t.Null()]),
			last_error: t.Union([t.String(), t.Null()]),
			last_failure_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
		},
		{ description: "This instance's circuit-breaker state for the channel" },
	),
}, { additionalProperties: false })

const TestResult = t.Object({
	ok: t.Boolean(),
	testable: t.Boolean({ description: 'false for a channel type with no chat endpoint (rerank, video, imgsvc, musicsvc): no call was made, and `ok` is false' }),
	status: Int({ description: 'Upstream HTTP status (0 when unreachable, or when not testable)' }),
	latency_ms: Int(),
	model: t.String(),
	message: t.String({ description: 'The answer text, or the error' }),
})

type Row = typeof channels.$inferSelect

export const channelView = (svc: Services) => (r: Row) => ({
	id: r.id,
	name: r.name,
	type: r.type,
	base_url: r.baseUrl,
	models: r.models,
	model_map: r.modelMap ?? {},
	priority: r.priority,
	weight: r.weight,
	status: r.status,
	disabled_reason: r.disabledReason,
	source: r.source,
	settings: r.settings ?? {},
	created_at: iso(r.createdAt)!,
	updated_at: iso(r.updatedAt)!,
	health: svc.health.snapshot(r.id),
})

const Fields = {
	type: ChannelType,
	base_url: BaseUrl,
	api_key: t.String({
		description:
			"Upstream key; stored encrypted, never returned. bedrock: a Bedrock API key, or ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]; vertex: a Google credentials file (JSON: service_account, authorized_user, external_account or impersonated_service_account) or an express mode API key; bedrock, vertex and azure: `ambient`, the credentials of the cloud the gateway runs on. A bedrock, vertex or azure key that cannot work is a 400, as is one that would send credentials made from the host's identity (`ambient`, or a vertex external_account whose subject token is the host's) off its cloud's own hosts, unless AMBIENT_ENDPOINTS lists them: 400 naming base_url, settings.control_plane_url or api_key",
	}),
	models: t.Array(t.String({ minLength: 1 }), { minItems: 1, description: 'Model names; `*` globs allowed' }),
	priority: Priority,
	weight: Weight,
	model_map: t.Record(t.String(), t.String(), { description: 'public name → upstream name' }),
	// The config file's schema too (config/channel-settings.ts): a misspelt key or a wrong type is refused, not stored.
	settings: ChannelSettings,
	enabled: t.Boolean({ description: 'false: the channel serves no request until enabled (default true)' }),
}

const DISABLED_BY_ADMIN = 'disabled by an administrator'

/** 400 naming the `model_map` entry that no request could use (config/channel-settings.ts). */
function checkMap(models: string[], modelMap: Record<string, string> | undefined) {
	const key = unlistedMapKey(models, modelMap)
	if (key !== undefined) throw badRequest(`model_map: ${unlistedMapKeyMessage(key)}`, `model_map.${key}`)
}

/** 400 naming the guardrail setting that cannot work without another (config/channel-settings.ts). */
function checkGuardrail(settings: ChannelSettings | undefined) {
	const problem = guardrailProblem(settings)
	if (problem) throw badRequest(`settings.${problem.field}: ${problem.message}`, `settings.${problem.field}`)
}

/**
 * 400 for a key its channel type cannot use (providers/channel-key.ts): said when saved, not at the first call. A key
 * given here may not name a file on the host, one stored from GATEWAY_CONFIG may; and the host's identity goes only to
 * its cloud's hosts (or AMBIENT_ENDPOINTS) when the key or where it goes is given here (channel-key.ts KeySource).
 */
async function checkKey(svc: Services, saved: Parameters<typeof channelKeyProblem>[0], given: { key: boolean; endpoints: boolean }) {
	const problem = await channelKeyProblem(saved, { hostFiles: !given.key, ambientEndpoints: given.key || given.endpoints ? svc.env.ambientEndpoints : undefined })
	if (problem) throw badRequest(`${problem.param}: ${problem.reason}`, problem.param)
}

/** Where a channel's credentials go: its type (which cloud), base_url and Bedrock's control plane. */
const endpointsOf = (c: { type: string; baseUrl: string; settings: Record<string, unknown> | null }) => JSON.stringify([c.type, c.baseUrl, c.settings?.control_plane_url])

/** Types whose key has a shape to check; other types' saves never decrypt the stored key. */
const SHAPED_KEYS = new Set(['bedrock', 'vertex', 'azure'])

export const channelsModule = (svc: Services) => {
	const view = channelView(svc)
	const find = async (id: number) => {
		const [row] = await svc.db.orm.select().from(channels).where(eq(channels.id, id)).limit(1)
		if (!row) throw notFound(`channel ${id} not found`)
		return row
	}
	const setStatus = async (id: number, enabled: boolean, reason: string | null) => {
		await find(id)
		const [row] = await svc.db.orm
			.update(channels)
			.set({ status: enabled ? 'enabled' : 'disabled', disabledReason: enabled ? null : reason, updatedAt: new Date() })
			.where(eq(channels.id, id))
			.returning()
		await svc.catalog.changed()
		return view(row!)
	}
	return new Elysia({ prefix: '/api/channels', detail: { tags: ['Management'] } })
		.use(adminAuth(svc))
		.onBeforeHandle(({ principal }) => assertAdmin(principal))
		.get('', async () => ({ data: (await svc.db.orm.select().from(channels).orderBy(desc(channels.id))).map(view) }), {
			response: { 200: t.Object({ data: t.Array(Channel) }), 401: ErrorBody, 403: ErrorBody },
			detail: { summary: 'List channels' },
		})
		.get('/:id', async ({ params }) => view(await find(params.id)), {
			params: IdParams,
			response: { 200: Channel, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
			detail: { summary: 'Get a channel' },
		})
		.post('',
			async ({ body, status }) => {
				checkMap(body.models, body.model_map)
				checkGuardrail(body.settings)
				const saved = { type: body.type, apiKey: body.api_key, baseUrl: body.base_url, settings: body.settings ?? {}, models: body.models, modelMap: body.model_map ?? {} }
				await checkKey(svc, saved, { key: true, endpoints: true })
				const [row] = await svc.db.orm
					.insert(channels)
					.values({
						name: body.name,
						type: body.type,
						baseUrl: body.base_url,
						apiKeyEnc: await svc.cipher.encrypt(body.api_key),
						models: body.models,
						modelMap: body.model_map ?? {},
						priority: body.priority ?? 0,
						weight: body.weight ?? 1,
						settings: body.settings ?? {},
						// As the config file's `enabled: false`: created, serving nothing until enabled.
						...(body.enabled === false && { status: 'disabled', disabledReason: DISABLED_BY_ADMIN }),
						source: 'api',
					})
					.onConflictDoNothing()
					.returning()
				if (!row) throw new GatewayError('invalid_request', `a channel named "${body.name}" exists`, { param: 'name', status: 409 })
				await svc.catalog.changed()
				return status(201, view(row))
			},
			{
				body: t.Object({
					name: Name(),
					type: Fields.type,
					base_url: Fields.base_url,
					api_key: Fields.api_key,
					models: Fields.models,
					priority: t.Optional(Fields.priority),
					weight: t.Optional(Fields.weight),
					model_map: t.Optional(Fields.model_map),
					settings: t.Optional(Fields.settings),
					enabled: t.Optional(Fields.enabled),
				}),
				response: { 201: Channel, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 409: ErrorBody },
				detail: { summary: 'Create a channel' },
			},
		)
		.patch(
			'/:id',
			async ({ params, body }) => {
				const cur = await find(params.id)
				// Checked when either changes: narrowing the models can leave an entry of the stored map unreachable too.
				if (body.models !== undefined || body.model_map !== undefined) checkMap(body.models ?? cur.models, body.model_map ?? cur.modelMap ?? {})
				if (body.settings !== undefined) checkGuardrail(body.settings)
				const type = body.type ?? cur.type
				const touched = [body.type, body.api_key, body.base_url, body.settings, body.models, body.model_map].some((v) => v !== undefined)
				if (SHAPED_KEYS.has(type) && touched) {
					const saved = {
						type,
						apiKey: body.api_key ?? (await svc.cipher.decrypt(cur.apiKeyEnc)),
						baseUrl: body.base_url ?? cur.baseUrl,
						settings: body.settings ?? cur.settings ?? {},
						models: body.models ?? cur.models,
						modelMap: body.model_map ?? cur.modelMap ?? {},
					}
					// A channel's endpoints left as they are stay as checked when saved, or as the operator's config set them.
					await checkKey(svc, saved, { key: body.api_key !== undefined, endpoints: endpointsOf(saved) !== endpointsOf(cur) })
				}
				const set: Partial<typeof channels.$inferInsert> = { updatedAt: new Date() }
				if (body.name !== undefined) set.name = body.name
				if (body.type !== undefined) set.type = body.type
				if (body.base_url !== undefined) set.baseUrl = body.base_url
				if (body.api_key !== undefined) set.apiKeyEnc = await svc.cipher.encrypt(body.api_key)
				if (body.models !== undefined) set.models = body.models
				if (body.model_map !== undefined) set.modelMap = body.model_map
				if (body.priority !== undefined) set.priority = body.priority
				if (body.weight !== undefined) set.weight = body.weight
				if (body.settings !== undefined) set.settings = body.settings
				if (body.enabled !== undefined) {
					set.status = body.enabled ? 'enabled' : 'disabled'
					set.disabledReason = body.enabled ? null : DISABLED_BY_ADMIN
				}
				const [row] = await renaming('channel', body.name, () => svc.db.orm.update(channels).set(set).where(eq(channels.id, params.id)).returning())
				await svc.catalog.changed()
				return view(row!)
			},
			{
				params: IdParams,
				body: t.Partial(t.Object({ name: Name(), ...Fields })),
				response: { 200: Channel, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
				detail: { summary: 'Update a channel' },
			},
		)
		.post('/:id/disable', ({ params }) => setStatus(params.id, false, DISABLED_BY_ADMIN), {
			params: IdParams,
			response: { 200: Channel, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
			detail: { summary: 'Disable a channel' },
		})
		.post('/:id/enable', ({ params }) => setStatus(params.id, true, null), {
			params: IdParams,
			response: { 200: Channel, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
			detail: { summary: 'Enable a channel' },
		})
		.post(
			'/:id/test',
			async ({ params, body }) => {
				const row = await find(params.id)
				return testChannel(svc, row, body?.model)
			},
			{
				params: IdParams,
				body: t.Optional(
					t.Object({
						model: t.Optional(
							t.String({
								minLength: 1,
								description: 'Model to try; default: the first `model_map` key or exact model name, else the first priced model (with an output price) the globs match; 400 when there is none',
							}),
						),
					}),
				),
				response: { 200: TestResult, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
				detail: { summary: 'Make a real one-token call to the upstream and report the result (not billed)' },
			},
		)
		.delete('/:id', ({ params }) => setStatus(params.id, false, 'deleted by an administrator'), {
			params: IdParams,
			response: { 200: Channel, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
			detail: { summary: 'Disable a channel (channels are never deleted: usage rows refer to them)' },
		})
}
