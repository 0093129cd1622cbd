/**
 * The web console: pages and assets, sessions (cookie + CSRF), users, settings, the public price list and the
 * spend chart's data. Registers the session as a way to call the management API, so the console is just another
 * client of it and every check there applies to console users too.
 * @module
 */
import { Elysia } from 'elysia'
import type { Services } from '../../services'
import { sharedLoginLimiter } from './login-limiter'
import { pageRoutes } from './pages'
import { sessionResolver } from './sessions'
import { sessionRoutes } from './session-routes'
import { pricingRoutes, settingsRoutes } from './settings-routes'
import { spendRoutes } from './spend'
import { usersRoutes } from './users-routes'

export { bootstrapAdmin } from './bootstrap'

const registered = new WeakSet<Services>()

export function consoleModule(svc: Services) {
	if (!registered.has(svc)) {
		registered.add(svc)
		svc.principals.push(sessionResolver(svc.db))
	}
	// One limiter for every password check: sign-in, and the current password a password change asks for. Its counts
	// are shared by the instances (limits/strikes.ts), and every check asks for them: sign-ins are rare.
	const limiter = sharedLoginLimiter(svc.strikes, 'login')
	return new Elysia()
		.use(pageRoutes(svc))
		.use(sessionRoutes(svc, limiter))
		.use(usersRoutes(svc, limiter))
		.use(settingsRoutes(svc))
		.use(pricingRoutes(svc))
		.use(spendRoutes(svc))
}
