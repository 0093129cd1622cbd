/**
 * A running Switchboard for integration tests: its own database (test/helpers/db.ts), the given gateway config,
 * listening on an ephemeral port so real SDKs can talk to it, plus management-API shortcuts.
 */
import { createApp } from '../../src/app'
import { loadEnv } from '../../src/config/env'
import type { GatewayConfig } from '../../src/config/gateway-file'
import { silentLogger } from '../../src/lib/log'
import { listenOptions } from '../../src/server'
import { createServices, type Services } from '../../src/services'
import { createTestDb } from './db'

export const ADMIN_KEY = 'test-admin-key-0123456789'

export type TestApp = {
	url: string
	svc: Services
	admin(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; body: any }>
	/** Creates an account with `balance` USD and a key on it; returns both ids and the key. */
	account(balance: number, token?: TokenFields): Promise<{ accountId: number; tokenId: number; key: string }>
	balance(accountId: number): Promise<number>
	/** Serves `request` in this process, without a socket (the caller keeps the Request object it made). */
	handle(request: Request): Promise<Response>
	close(): Promise<void>
}

/** Calls the management API of the gateway at `url` with its admin key: JSON in, JSON (or the text) out. */
export const adminCaller =
	(url: string, adminKey = ADMIN_KEY) =>
	async (path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> => {
		const res = await fetch(url + path, {
			method: init.method ?? (init.body ? 'POST' : 'GET'),
			headers: { authorization: `Bearer ${adminKey}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
			body: init.body ? JSON.stringify(init.body) : undefined,
		})
		const text = await res.text()
		try {
			return { status: res.status, body: JSON.parse(text) }
		} catch {
			return { status: res.status, body: text }
		}
	}

type Admin = ReturnType<typeof adminCaller>
type TokenFields = { spend_limit?: number | null; expires_at?: string | null; name?: string }

/** Through the management API: an account named `name` with `balance` USD and a key on it. */
export async function createAccount(admin: Admin, balance: number, name = 'test', token: TokenFields = {}): Promise<{ accountId: number; tokenId: number; key: string }> {
	const a = await admin('/api/accounts', { body: { name, balance } })
	if (a.status !== 201) throw new Error(`account: ${JSON.stringify(a.body)}`)
	const k = await admin('/api/tokens', { body: { account_id: a.body.id, name: token.name ?? 'key', ...token } })
	if (k.status !== 201) throw new Error(`token: ${JSON.stringify(k.body)}`)
	return { accountId: a.body.id, tokenId: k.body.id, key: k.body.key }
}

/** An account's balance in USD, through the management API. */
export const balanceOf = async (admin: Admin, accountId: number): Promise<number> => (await admin(`/api/accounts/${accountId}`)).body.balance

/** A response's status, headers and text, and its JSON when it is JSON. */
export async function readAnswer(res: Response): Promise<{ status: number; headers: Headers; text: string; json: any }> {
	const text = await res.text()
	let json: unknown
	try {
		json = JSON.parse(text)
	} catch {
		json = undefined
	}
	return { status: res.status, headers: res.headers, text, json }
}

/** `serverOptions`: listen as the server does (src/server.ts `listenOptions`: Bun's body limit, timeouts), on a free port. */
export async function startTestApp(opts: { config?: GatewayConfig; env?: Record<string, string>; serverOptions?: boolean } = {}): Promise<TestApp> {
	const tdb = await createTestDb()
	const env = loadEnv({ ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'error', ...opts.env })
	const svc = await createServices(env, { db: tdb.db, config: opts.config ?? { channels: [], models: [] }, log: silentLogger })
	const app = createApp(svc).listen(opts.serverOptions ? { ...listenOptions(env), port: 0, hostname: '127.0.0.1' } : { port: 0, hostname: '127.0.0.1', idleTimeout: 60 })
	const url = `http://127.0.0.1:${app.server!.port}`
	const admin = adminCaller(url)
	return {
		url,
		svc,
		admin,
		account: (balance, token = {}) => createAccount(admin, balance, 'test', token),
		balance: (accountId) => balanceOf(admin, accountId),
		handle: (request) => app.handle(request),
		async close() {
			await app.stop(true)
			await svc.close()
			await tdb.drop()
		},
	}
}
