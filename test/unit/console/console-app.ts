/**
 * A running gateway with the console's administrator bootstrapped, plus a browser-like client per user: it keeps
 * the session cookie and sends the CSRF token the way the console does.
 */
import { bootstrapAdmin } from '../../../src/modules/console'
import { startTestApp, type TestApp } from '../../helpers/app'
import type { GatewayConfig } from '../../../src/config/gateway-file'

export const ADMIN_PASSWORD = 'admin-password-123'

export type Reply = { status: number; body: any; headers: Headers }

export type Browser = {
	cookie: string
	csrf: string
	call(path: string, init?: { method?: string; body?: unknown; csrf?: boolean; headers?: Record<string, string> }): Promise<Reply>
}

export type ConsoleApp = TestApp & {
	post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>
	signIn(username: string, password: string): Promise<Browser>
}

async function reply(res: Response): Promise<Reply> {
	const text = await res.text()
	let body: unknown = text
	try {
		body = JSON.parse(text)
	} catch {}
	return { status: res.status, body, headers: res.headers }
}

export async function startConsoleApp(opts: { config?: GatewayConfig; env?: Record<string, string> } = {}): Promise<ConsoleApp> {
	const app = await startTestApp({ config: opts.config, env: { ADMIN_PASSWORD, ...opts.env } })
	await bootstrapAdmin(app.svc, () => {})
	const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
		reply(await fetch(app.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }))
	return {
		...app,
		post,
		async signIn(username, password) {
			const r = await post('/api/session', { username, password })
			if (r.status !== 200) throw new Error(`sign-in ${username}: ${r.status} ${JSON.stringify(r.body)}`)
			const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!
			const csrf = r.body.csrf_token as string
			return {
				cookie,
				csrf,
				async call(path, init = {}) {
					const method = init.method ?? (init.body === undefined ? 'GET' : 'POST')
					const headers: Record<string, string> = { cookie, ...init.headers }
					if (init.body !== undefined) headers['content-type'] = 'application/json'
					if (init.csrf !== false && method !== 'GET') headers['x-csrf-token'] = csrf
					return reply(await fetch(app.url + path, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) }))
				},
			}
		},
	}
}

/**
 * `count` usage rows of account 1 under `token` and `model`, request ids `r-1` … `r-<count>`, a second apart and
 * the last newest (so a page lists them `r-<count>` first), as the ledger writes them.
 */
export async function usageRows(app: TestApp, o: { token: number; model: string; count: number }): Promise<void> {
	for (let i = 1; i <= o.count; i++)
		await app.svc.db.sql.query(
			`INSERT INTO usage_logs (request_id, account_id, token_id, model, endpoint, status, cost, input_tokens, output_tokens, created_at)
			 VALUES ($1, 1, $2, $3, '/v1/chat/completions', 200, 10, 1, 1, now() - ($4 || ' seconds')::interval)`,
			[`r-${i}`, o.token, o.model, String(60 - i)],
		)
}
