/**
 * A gateway for the security tests: the three vendor mocks behind one channel each, every log line kept (debug level)
 * so a test can search them for secrets, and helpers that call each protocol with a caller's key.
 */
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { createLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { adminCaller, balanceOf, createAccount, readAnswer } from '../../helpers/app'
import { createTestDb } from '../../helpers/db'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

export const ADMIN_KEY = 'sec-admin-key-a1b2c3d4e5f6'
export const SECRET_KEY = 'sec-secret-key-z9y8x7w6v5u4'
/** Upstream keys in each vendor's own format, so a pattern-based redaction is put to the test too. */
export const UPSTREAM = { openai: 'sk-proj-UPSTREAMopenai0123456789', anthropic: 'sk-ant-api03-UPSTREAManthropic0123', gemini: 'AIzaSyUPSTREAMgemini0123456789abcdefghi' }
export const MODELS = { openai: 'sec-gpt', anthropic: 'sec-claude', gemini: 'sec-gemini' } as const

export type SecApp = {
	url: string
	svc: Services
	logs: string[]
	mocks: { openai: VendorMock; anthropic: VendorMock; gemini: VendorMock }
	admin(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; body: any }>
	account(balance: number, name?: string): Promise<{ accountId: number; tokenId: number; key: string }>
	balance(accountId: number): Promise<number>
	close(): Promise<void>
}

export async function startSecApp(env: Record<string, string> = {}): Promise<SecApp> {
	const mocks = {
		openai: await startOpenAIMock({ apiKey: UPSTREAM.openai }),
		anthropic: await startAnthropicMock({ apiKey: UPSTREAM.anthropic }),
		gemini: await startGeminiMock({ apiKey: UPSTREAM.gemini }),
	}
	const config: GatewayConfig = {
		channels: [
			{ name: 'o', type: 'openai', base_url: mocks.openai.url, api_key: UPSTREAM.openai, models: [MODELS.openai], model_map: { [MODELS.openai]: 'gpt-4o-mini' } },
			{ name: 'a', type: 'anthropic', base_url: mocks.anthropic.url, api_key: UPSTREAM.anthropic, models: [MODELS.anthropic], model_map: { [MODELS.anthropic]: 'claude-sonnet-5' } },
			{ name: 'g', type: 'gemini', base_url: mocks.gemini.url, api_key: UPSTREAM.gemini, models: [MODELS.gemini], model_map: { [MODELS.gemini]: 'gemini-2.5-flash' } },
		],
		models: Object.values(MODELS).map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
	}
	const tdb = await createTestDb()
	const logs: string[] = []
	const log = createLogger('debug', (l) => logs.push(l))
	const e = loadEnv({ ADMIN_KEY, SECRET_KEY, LOG_LEVEL: 'debug', RETRIES: '0', ...env })
	const svc = await createServices(e, { db: tdb.db, config, log })
	const app = createApp(svc).listen({ port: 0, hostname: '127.0.0.1', idleTimeout: 30 })
	const url = `http://127.0.0.1:${app.server!.port}`
	const admin: SecApp['admin'] = adminCaller(url, ADMIN_KEY)
	return {
		url,
		svc,
		logs,
		mocks,
		admin,
		account: (balance, name = 'acct') => createAccount(admin, balance, name),
		balance: (accountId) => balanceOf(admin, accountId),
		async close() {
			await app.stop(true)
			await svc.close()
			await tdb.drop()
			for (const m of Object.values(mocks)) await m.stop()
		},
	}
}

/** POSTs JSON and returns status, headers and the body's text (and JSON when it is JSON). */
export async function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; headers: Headers; text: string; json: any }> {
	return readAnswer(await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }))
}

/** Settled charges are written in batches (LEDGER_FLUSH_MS): wait for them before reading a balance. */
export async function flushed(svc: Services): Promise<void> {
	await svc.ledger.flush()
}
