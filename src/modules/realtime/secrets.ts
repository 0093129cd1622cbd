/**
 * POST /v1/realtime/client_secrets (GA) and POST /v1/realtime/sessions (the beta): an app's server, with its key,
 * mints a short-lived secret (client-secret.ts) that a browser then presents to GET /v1/realtime, as the
 * `openai-insecure-api-key.` subprotocol or as Bearer. Shapes from OpenAI's reference
 * (platform.openai.com/docs/api-reference/realtime-sessions): the GA answer is `{ value, expires_at, session }`,
 * `expires_after: { anchor: "created_at", seconds }` (10–7200, default 600); the beta answers the session object
 * with `client_secret: { value, expires_at }`, its `client_secret.expires_after` defaulting to one minute.
 * Nothing is asked of the upstream: the model is checked here (allowed for the key, served by an OpenAI channel)
 * and the config is applied when the browser connects.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { randomString } from '../../lib/ids'
import { openaiErrors } from '../../passthrough/schemas'
import type { Services } from '../../services'
import { BETA_DEFAULT_TTL_SECONDS, DEFAULT_TTL_SECONDS, expiryOf, mintClientSecret } from './client-secret'
import { transcriptionModelOf, transcriptionSetting } from './transcription-config'
import { realtimeRoute } from './upstream'

const ExpiresAfter = t.Object(
	{
		anchor: t.Optional(t.Literal('created_at')),
		seconds: t.Optional(t.Number({ description: '10–7200' })),
	},
	{ additionalProperties: false },
)

const Session = t.Record(t.String(), t.Unknown(), { description: 'Session configuration, as in session.update' })

export const ClientSecretRequest = t.Object(
	{
		expires_after: t.Optional(ExpiresAfter),
		session: t.Optional(Session),
	},
	{ additionalProperties: true },
)

export const ClientSecretResponse = t.Object({ value: t.String(), expires_at: t.Integer(), session: Session }, { additionalProperties: true })

export const BetaSessionRequest = t.Object(
	{
		model: t.Optional(t.String()),
		client_secret: t.Optional(t.Object({ expires_after: t.Optional(ExpiresAfter) }, { additionalProperties: true })),
	},
	{ additionalProperties: true },
)

export const BetaSessionResponse = t.Object(
	{ id: t.String(), object: t.Literal('realtime.session'), client_secret: t.Object({ value: t.String(), expires_at: t.Integer() }) },
	{ additionalProperties: true },
)

const missingModel = (param: string) => new GatewayError('invalid_request', `Missing required parameter: '${param}' (the Realtime model the secret is for)`, { code: 'missing_required_parameter', param })

/** A conversation's input audio transcription is billed at its own model's prices: that model is checked too. */
function transcriberRoute(svc: Services, token: AuthToken, session: Record<string, unknown>) {
	const model = transcriptionSetting(session)?.model
	if (typeof model === 'string') realtimeRoute(svc, token, model)
}

const sessionId = () => `sess_${randomString(24)}`

export const realtimeSecretsModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		// Minting calls no model: not counted against the key's requests per minute (the session it opens is).
		.use(modelAuth(svc, { counted: false }))
		.post(
			'/v1/realtime/client_secrets',
			async ({ body, token }) => {
				const session: Record<string, unknown> = body.session ?? {}
				// A transcription session's model is its transcription model (billed at that model's audio prices).
				const transcription = session.type === 'transcription'
				const model = transcription ? transcriptionModelOf(session) : session.model
				if (typeof model !== 'string' || !model) throw missingModel(transcription ? 'session.audio.input.transcription.model' : 'session.model')
				realtimeRoute(svc, token, model)
				if (!transcription) transcriberRoute(svc, token, session)
				const expiresAt = expiryOf(body.expires_after?.seconds, DEFAULT_TTL_SECONDS, 'expires_after.seconds')
				const config = { type: 'realtime', ...session }
				const value = await mintClientSecret(svc, token, { model, session: config, expiresAt })
				return { value, expires_at: expiresAt, session: { ...config, object: 'realtime.session', id: sessionId(), expires_at: 0 } }
			},
			{
				body: ClientSecretRequest,
				response: { 200: ClientSecretResponse, ...openaiErrors },
				detail: {
					summary: 'Create a Realtime client secret',
					description:
						'An ephemeral `ek_…` secret for a browser to open `GET /v1/realtime` (as the `openai-insecure-api-key.` subprotocol or Bearer) with this key\'s account, limits and allowed models, for the session config\'s `model` only (a `type: "transcription"` session: its `audio.input.transcription.model`); the config is applied at connect. Valid for `expires_after.seconds` (10–7200, default 600); useless on any other route.',
				},
			},
		)
		.post(
			'/v1/realtime/sessions',
			async ({ body, token }) => {
				const { client_secret, ...session } = body
				const model = session.model
				if (typeof model !== 'string' || !model) throw missingModel('model')
				realtimeRoute(svc, token, model)
				transcriberRoute(svc, token, session)
				const expiresAt = expiryOf(client_secret?.expires_after?.seconds, BETA_DEFAULT_TTL_SECONDS, 'client_secret.expires_after.seconds')
				const value = await mintClientSecret(svc, token, { model, session, expiresAt })
				return { ...session, id: sessionId(), object: 'realtime.session' as const, client_secret: { value, expires_at: expiresAt } }
			},
			{
				body: BetaSessionRequest,
				response: { 200: BetaSessionResponse, ...openaiErrors },
				detail: {
					summary: 'Create a Realtime session secret (beta)',
					description: 'The beta form of `/v1/realtime/client_secrets`: the session config at the top level, answered with `client_secret: { value, expires_at }` (default one minute).',
				},
			},
		)
