/** Schemas of the console's own endpoints (sessions, users, settings, pricing, spend). */
import { t } from 'elysia'
import { badRequest } from '../../core/errors'

export const Username = t.String({ minLength: 3, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$', description: 'Letters, digits and . _ @ - (stored lower-case)' })

export const Password = t.String({ minLength: 8, maxLength: 200, description: 'At least 8 characters, not all spaces' })

/** A character other than a space or an invisible one (U+200B–U+200D zero-width spaces and joiners, U+2060, U+FEFF). */
const VISIBLE = /[^\s\u200b-\u200d\u2060\ufeff]/

/**
 * Refuses a new password of spaces only (or other blank characters): it passes the length rule yet is the first any
 * guesser tries. Checked in the handlers, so the 400 says it in words (`password: …`) rather than as a pattern.
 * @example assertPassword('        ') // throws 400 naming password
 */
export function assertPassword(password: string | undefined, param = 'password') {
	if (password !== undefined && !VISIBLE.test(password)) throw badRequest(`${param}: must hold something other than spaces`, param)
}

export const User = t.Object({
	id: t.Integer(),
	username: t.String(),
	account_id: t.Integer(),
	account_name: t.String(),
	is_admin: t.Boolean(),
	status: t.String({ description: 'active | disabled' }),
	created_at: t.String({ format: 'date-time' }),
})
export type User = typeof User.static

export const SessionAccount = t.Object({ id: t.Integer(), name: t.String(), balance: t.Number({ description: 'USD' }), status: t.String() })

export const SessionInfo = t.Object({
	user: t.Union([User, t.Null()], { description: 'null when not signed in' }),
	account: t.Union([SessionAccount, t.Null()]),
	csrf_token: t.Union([t.String(), t.Null()], { description: 'Send as x-csrf-token on every state-changing request made with the session cookie' }),
	signup_enabled: t.Boolean(),
})
export type SessionInfo = typeof SessionInfo.static

export const Credentials = t.Object({ username: t.String({ minLength: 1, maxLength: 64 }), password: t.String({ minLength: 1, maxLength: 200 }) })

export const Settings = t.Object({
	signup_enabled: t.Boolean({ description: 'Anyone may create an account from the sign-in page' }),
	signup_balance: t.Number({ minimum: 0, description: 'USD credited to accounts created by self sign-up' }),
})
export type Settings = typeof Settings.static

export const PricedModel = t.Object({
	name: t.String(),
	input_per_mtok: t.Union([t.Number(), t.Null()], { description: 'USD per million input tokens; null for a model served unpriced (ALLOW_UNPRICED_MODELS)' }),
	output_per_mtok: t.Union([t.Number(), t.Null()]),
	cache_read_per_mtok: t.Union([t.Number(), t.Null()]),
	cache_write_per_mtok: t.Union([t.Number(), t.Null()]),
	per_request: t.Union([t.Number(), t.Null()]),
	prices: t.Record(t.String(), t.Number(), { description: 'Other unit prices in USD' }),
	endpoints: t.Array(t.String(), { description: 'Gateway endpoints that serve the model, e.g. POST /v1/chat/completions' }),
	protocols: t.Array(t.String(), { description: 'Client protocols, e.g. OpenAI Chat Completions' }),
})
export type PricedModel = typeof PricedModel.static

export const SpendDay = t.Object({
	day: t.String({ description: 'YYYY-MM-DD in the caller’s offset' }),
	cost: t.Number({ description: 'USD' }),
	requests: t.Integer(),
	input_tokens: t.Integer(),
	output_tokens: t.Integer(),
})
