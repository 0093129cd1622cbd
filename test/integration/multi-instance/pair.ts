/**
 * Two real gateway processes (`bun src/index.ts`, as an operator starts them) on one fresh PostgreSQL database, with
 * or without Redis between them, driven from outside through the official `openai` and `@anthropic-ai/sdk` SDKs and
 * the management API. PGlite is one process's embedded database: two processes cannot share it, so on a test run
 * without DATABASE_URL these files skip, saying why.
 * @module
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { redisEnv } from '../../helpers/redis'
import { ADMIN_KEY as ADMIN, deploy, type Deployment, type Server } from '../resilience/server-process'

export type { Server } from '../resilience/server-process'

/** Whether this run has PostgreSQL (DATABASE_URL), which two processes can share. */
export const ON_POSTGRES = !!process.env.DATABASE_URL

/** Prints why a file's tests are skipped on PGlite (once per file). */
export function noteSkip(file: string): void {
	if (!ON_POSTGRES) console.log(`skip ${file.split('/').slice(-2).join('/')}: two gateway processes cannot share one embedded PGlite database; set DATABASE_URL to a PostgreSQL to run it`)
}

export type Pair = {
	dep: Deployment
	a: Server
	b: Server
	redis: boolean
	/** Management API call on `server` (default A) that returns the status rather than throwing. */
	admin(path: string, init?: { method?: string; body?: unknown; server?: Server }): Promise<{ status: number; body: any }>
	/** An account with `balance` USD and one key on it per entry of `keys` (token fields such as spend_limit). */
	account(balance: number, keys?: Array<Record<string, unknown>>): Promise<{ accountId: number; tokens: Array<{ id: number; key: string }> }>
	/** SIGTERM to `server`; resolves with its exit code. */
	stop(server: Server): Promise<number | null>
	close(): Promise<void>
}

/**
 * Starts A and B on one database with `config`; with `redis`, both on the test Redis under this file's prefix.
 * Short ledger intervals so a test sees settled books quickly; `env` adds to both.
 */
export async function startPair(file: string, config: GatewayConfig, opts: { redis: boolean; env?: Record<string, string> }): Promise<Pair> {
	const base = { LOG_LEVEL: 'warn', ...(opts.redis ? redisEnv(`${file}:${Math.random().toString(36).slice(2, 8)}`) : {}), ...opts.env }
	const dep = await deploy(config, base)
	const a = await dep.start()
	const b = await dep.start()
	const admin: Pair['admin'] = async (path, init = {}) => {
		const res = await fetch((init.server ?? a).url + path, {
			method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
			headers: { authorization: `Bearer ${ADMIN}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
			body: init.body === undefined ? undefined : JSON.stringify(init.body),
		})
		const text = await res.text()
		return { status: res.status, body: text ? JSON.parse(text) : undefined }
	}
	return {
		dep,
		a,
		b,
		redis: opts.redis,
		admin,
		async account(balance, keys = [{}]) {
			const acct = await admin('/api/accounts', { body: { name: 'multi', balance } })
			if (acct.status !== 201) throw new Error(`account: ${JSON.stringify(acct.body)}`)
			const tokens: Array<{ id: number; key: string }> = []
			for (const [i, fields] of keys.entries()) {
				const k = await admin('/api/tokens', { body: { account_id: acct.body.id, name: `key-${i}`, ...fields } })
				if (k.status !== 201) throw new Error(`token: ${JSON.stringify(k.body)}`)
				tokens.push({ id: k.body.id, key: k.body.key })
			}
			return { accountId: acct.body.id, tokens }
		},
		async stop(server) {
			server.proc.kill('SIGTERM')
			return server.exited
		},
		close: () => dep.close(),
	}
}

export const openai = (server: Server, key: string) => new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 })
export const anthropic = (server: Server, key: string) => new Anthropic({ apiKey: key, baseURL: server.url, maxRetries: 0 })

/** An SDK call's end: 200, or the error's HTTP status and body as the SDK read them. */
export type Outcome = { status: number; body?: any; proto: 'chat' | 'messages'; stream: boolean }

/** One chat (OpenAI SDK) or messages (Anthropic SDK) call of `model`, streamed or not, read to its end. */
export async function call(server: Server, key: string, model: string, proto: 'chat' | 'messages', stream: boolean, text: string, maxTokens = 20): Promise<Outcome> {
	try {
		if (proto === 'chat') {
			const c = openai(server, key)
			if (!stream) await c.chat.completions.create({ model, max_tokens: maxTokens, messages: [{ role: 'user', content: text }] })
			else for await (const _ of await c.chat.completions.create({ model, max_tokens: maxTokens, stream: true, messages: [{ role: 'user', content: text }] }));
		} else {
			const c = anthropic(server, key)
			if (!stream) await c.messages.create({ model, max_tokens: maxTokens, messages: [{ role: 'user', content: text }] })
			else for await (const _ of await c.messages.create({ model, max_tokens: maxTokens, stream: true, messages: [{ role: 'user', content: text }] }));
		}
		return { status: 200, proto, stream }
	} catch (e) {
		const err = e as { status?: number; error?: unknown; message?: string }
		return { status: err.status ?? 0, body: err.error ?? err.message, proto, stream }
	}
}

/** The account's books straight from the database, in one statement (one snapshot). */
export async function books(dep: Deployment, accountId: number) {
	return dep.withDb(async (db) => {
		const [r] = await db.sql.query<Record<string, string>>(
			`SELECT (SELECT balance FROM accounts WHERE id = $1) AS balance,
				(SELECT COALESCE(SUM(amount), 0) FROM credits WHERE account_id = $1) AS credits,
				(SELECT COALESCE(SUM(amount), 0) FROM ledger_leases WHERE account_id = $1) AS leased,
				(SELECT COALESCE(SUM(in_use), 0) FROM ledger_leases WHERE account_id = $1) AS in_use,
				(SELECT COUNT(*) FROM ledger_leases WHERE account_id = $1) AS leases,
				(SELECT COALESCE(SUM(cost), 0) FROM usage_logs WHERE account_id = $1) AS usage_cost,
				(SELECT COUNT(*) FROM usage_logs WHERE account_id = $1) AS usage_rows`,
			[accountId],
		)
		const n = (k: string) => Number(r![k])
		return { balance: n('balance'), credits: n('credits'), leased: n('leased'), inUse: n('in_use'), leases: n('leases'), usageCost: n('usage_cost'), usageRows: n('usage_rows') }
	})
}

/** A key's spent and reserved micro-USD and the sum of its usage rows, from the database. */
export async function keyBooks(dep: Deployment, tokenId: number) {
	return dep.withDb(async (db) => {
		const [r] = await db.sql.query<Record<string, string>>(
			`SELECT t.spent, t.reserved, t.spend_limit, (SELECT COALESCE(SUM(cost), 0) FROM usage_logs u WHERE u.token_id = t.id) AS used,
				(SELECT COUNT(*) FROM usage_logs u WHERE u.token_id = t.id AND u.status = 200) AS ok_rows
			 FROM api_tokens t WHERE t.id = $1`,
			[tokenId],
		)
		return { spent: Number(r!.spent), reserved: Number(r!.reserved), limit: r!.spend_limit === null ? null : Number(r!.spend_limit), used: Number(r!.used), okRows: Number(r!.ok_rows) }
	})
}

/** Polls `check` every `everyMs` until it returns true; returns the ms it took, or throws after `withinMs`. */
export async function within(withinMs: number, check: () => Promise<boolean>, everyMs = 100): Promise<number> {
	const t0 = Date.now()
	for (;;) {
		if (await check()) return Date.now() - t0
		if (Date.now() - t0 > withinMs) throw new Error(`not within ${withinMs} ms`)
		await Bun.sleep(everyMs)
	}
}
