/**
 * The balance endpoints third-party chat clients read (NextChat, LobeChat, ChatGPT-Next-Web …), in the shapes
 * one-api and new-api serve (QuantumNous/new-api controller/billing.go): `subscription` gives the limit as
 * `hard_limit_usd`, `usage` the spend in cents as `total_usage`, and clients show `hard_limit_usd - total_usage/100`
 * as what is left. Authenticated by the key. A key with a spend limit shows that limit (capped by what the account can
 * still pay) and the key's spend; a key without one shows the account: balance plus spend, and the spend. Like
 * new-api, `start_date`/`end_date` are accepted and ignored, so the two numbers always agree on what is left.
 * Also served without the /v1 prefix, as one-api does.
 * @module
 */
import { Elysia, t } from 'elysia'
import { microsToUsd } from '../../billing/money'
import { AVAILABLE_BALANCE_SQL } from '../../billing/views'
import { modelAuth } from '../../http/model-auth'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import type { AuthToken } from '../../auth/api-key'
import type { Services } from '../../services'

export const Subscription = t.Object({
	object: t.Literal('billing_subscription'),
	has_payment_method: t.Boolean(),
	soft_limit_usd: t.Number(),
	hard_limit_usd: t.Number({ description: 'What the key may spend in all: its limit, or the account balance plus its spend' }),
	system_hard_limit_usd: t.Number(),
	access_until: t.Integer({ description: 'Key expiry, Unix seconds; 0 when it never expires' }),
})

export const BillingUsage = t.Object({
	object: t.Literal('list'),
	total_usage: t.Number({ description: 'Spend so far, in US cents' }),
})

/** Limit and spend in micro-USD for the key's view. */
export async function billingView(svc: Services, token: AuthToken): Promise<{ limit: number; used: number }> {
	await svc.ledger.flush()
	const [acct] = await svc.db.sql.query<{ balance: number }>(AVAILABLE_BALANCE_SQL, [token.accountId])
	const balance = Number(acct?.balance ?? 0)
	const [tok] = await svc.db.sql.query<{ spend_limit: number | null; spent: number }>('SELECT spend_limit, spent FROM api_tokens WHERE id = $1', [token.id])
	if (tok && tok.spend_limit !== null) {
		const used = Number(tok.spent)
		return { used, limit: Math.min(Number(tok.spend_limit), used + balance) }
	}
	const [sum] = await svc.db.sql.query<{ spent: number | string | null }>('SELECT COALESCE(SUM(cost), 0) AS spent FROM usage_logs WHERE account_id = $1', [token.accountId])
	const used = Number(sum?.spent ?? 0)
	return { used, limit: balance + used }
}

// Open, as the vendors' own queries: a client's other parameters are ignored, not refused (src/app.ts).
const ignored = 'Accepted for the clients that send it and ignored: the usage is always since the account began (as one-api and new-api do), so that it and the subscription always agree on what is left.'
const UsageQuery = t.Object({ start_date: t.Optional(t.String({ description: ignored })), end_date: t.Optional(t.String({ description: ignored })) }, { additionalProperties: true })

const routes = (svc: Services, prefix: string) =>
	new Elysia({ prefix, detail: { tags: ['OpenAI'], hide: prefix === '' } })
		.use(modelAuth(svc, { counted: false }))
		.get(
			'/dashboard/billing/subscription',
			async ({ token }) => {
				const { limit } = await billingView(svc, token)
				const usd = microsToUsd(limit)
				return {
					object: 'billing_subscription' as const,
					has_payment_method: true,
					soft_limit_usd: usd,
					hard_limit_usd: usd,
					system_hard_limit_usd: usd,
					access_until: token.expiresAt ? Math.floor(token.expiresAt / 1000) : 0,
				}
			},
			{ response: { 200: Subscription, 401: OpenAIErrorBody }, detail: { summary: 'Spending limit of this key (one-api shape)' } },
		)
		.get(
			'/dashboard/billing/usage',
			async ({ token }) => {
				const { used } = await billingView(svc, token)
				// Cents, as OpenAI's legacy endpoint reported; integer micro-USD / 10^4 is exact to the cent's 1/100.
				return { object: 'list' as const, total_usage: used / 10_000 }
			},
			{ query: UsageQuery, response: { 200: BillingUsage, 401: OpenAIErrorBody }, detail: { summary: 'Spend of this key (one-api shape, cents)' } },
		)

export const dashboardModule = (svc: Services) => new Elysia({ name: 'dashboard' }).use(routes(svc, '/v1')).use(routes(svc, ''))
