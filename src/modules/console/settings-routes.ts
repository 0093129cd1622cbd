/** Console settings (self sign-up) for administrators, and the public JSON price list. */
import { Elysia, t } from 'elysia'
import { assertAdmin } from '../../auth/principal'
import { microsToUsd, usdToMicros } from '../../billing/money'
import { badRequest } from '../../core/errors'
import type { Services } from '../../services'
import { adminAuth } from '../admin/auth'
import { ErrorBody } from '../admin/schemas'
import { pricedModels } from './pricing-data'
import { PricedModel, Settings } from './schemas'
import { type ConsoleSettings, readSettings, writeSettings } from './settings-store'

const view = (s: ConsoleSettings) => ({ signup_enabled: s.signupEnabled, signup_balance: microsToUsd(s.signupBalance) })

export function settingsRoutes(svc: Services) {
	return new Elysia({ prefix: '/api/settings', detail: { tags: ['Console'] } })
		.use(adminAuth(svc))
		.get(
			'',
			async ({ principal }) => {
				assertAdmin(principal)
				return view(await readSettings(svc.db))
			},
			{ response: { 200: Settings, 401: ErrorBody, 403: ErrorBody }, detail: { summary: 'Console settings' } },
		)
		.patch(
			'',
			async ({ body, principal }) => {
				assertAdmin(principal)
				let signupBalance: number | undefined
				if (body.signup_balance !== undefined) {
					try {
						signupBalance = usdToMicros(body.signup_balance)
					} catch (e) {
						throw badRequest(`signup_balance: ${(e as Error).message}`, 'signup_balance')
					}
				}
				return view(await writeSettings(svc.db, { signupEnabled: body.signup_enabled, signupBalance }))
			},
			{ body: t.Partial(Settings), response: { 200: Settings, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }, detail: { summary: 'Change console settings' } },
		)
}

export function pricingRoutes(svc: Services) {
	return new Elysia({ detail: { tags: ['Console'] } }).get(
		'/api/pricing',
		({ set }) => {
			set.headers['cache-control'] = 'public, max-age=60'
			return { data: pricedModels(svc.catalog, svc.env.allowUnpriced) }
		},
		{ response: { 200: t.Object({ data: t.Array(PricedModel) }) }, detail: { summary: 'Public price list: models, USD prices, endpoints and protocols', security: [] } },
	)
}
