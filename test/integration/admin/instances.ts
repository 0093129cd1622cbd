/**
 * Several gateways on one database, as an operator runs them: each with its own connection pool on PostgreSQL (one
 * shared PGlite in-process without DATABASE_URL), its own ledger and key cache, and Redis between them when asked.
 * Clients for the three protocols' official SDKs, and the management API, on any instance.
 * @module
 */
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { openDb } from '../../../src/db/client'
import type { Bus } from '../../../src/lib/bus'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { ADMIN_KEY, adminCaller } from '../../helpers/app'
import { createTestDb, type TestDb } from '../../helpers/db'

export { REDIS_URL, redisEnv } from '../../helpers/redis'

export type Instance = {
	url: string
	svc: Services
	admin(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; body: any }>
	/** Stops listening and closes the services (the ledger gives its leases back). */
	stop(): Promise<void>
}

export type Cluster = {
	t: TestDb
	nodes: Instance[]
	/** Creates an account with `balance` USD and a key on it (through the first instance). */
	account(balance: number, token?: Record<string, unknown>): Promise<{ accountId: number; tokenId: number; key: string }>
	close(): Promise<void>
}

export type Clients = { openai: OpenAI; anthropic: Anthropic; gemini: GoogleGenAI }

export const clients = (node: Instance, key: string): Clients => ({
	openai: new OpenAI({ apiKey: key, baseURL: `${node.url}/v1`, maxRetries: 0 }),
	anthropic: new Anthropic({ apiKey: key, baseURL: node.url, maxRetries: 0 }),
	gemini: new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: node.url, apiVersion: 'v1beta' } }),
})

/** One more instance on the cluster's database (with its own config and environment, e.g. a restart with an edited file). */
export async function startNode(t: TestDb, config: GatewayConfig, env: Record<string, string>, first: boolean, bus?: Bus): Promise<Instance> {
	const db = first || !t.url ? t.db : await openDb(t.url)
	const svc = await createServices(loadEnv({ ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'error', ...env }), { db, config, log: silentLogger, bus })
	const app = createApp(svc).listen({ port: 0, hostname: '127.0.0.1', idleTimeout: 60 })
	const url = `http://127.0.0.1:${app.server!.port}`
	let stopped = false
	return {
		url,
		svc,
		admin: adminCaller(url),
		async stop() {
			if (stopped) return
			stopped = true
			await app.stop(true)
			await svc.close()
			if (db !== t.db) await db.sql.close()
		},
	}
}

/**
 * A bus shared by instances in one process that delivers each message `delayMs` after it was published, to every
 * instance (the publisher too, as Redis does): Redis with a slow network, where a change reaches the other instances
 * only after the call that made it has answered.
 */
export function slowBus(delayMs: number): Bus {
	const handlers = new Map<string, Set<(m: string) => void>>()
	return {
		kind: 'redis',
		publish(topic, message) {
			setTimeout(() => {
				for (const h of handlers.get(topic) ?? []) h(message)
			}, delayMs)
		},
		publishCounted(topic, message) {
			this.publish(topic, message)
			return Promise.resolve(0) // a publisher does not wait on this bus: its delay stands for a lost race
		},
		subscribe(topic, handler) {
			let set = handlers.get(topic)
			if (!set) handlers.set(topic, (set = new Set()))
			set.add(handler)
		},
		close: async () => {},
		ready: async () => {},
		ping: async () => true,
		subscribed: () => true,
	}
}

/** `n` instances on one fresh database with the same config and environment (and `bus` shared, when given). */
export async function startCluster(n: number, config: GatewayConfig, env: Record<string, string> = {}, bus?: Bus): Promise<Cluster> {
	const t = await createTestDb()
	const nodes: Instance[] = []
	for (let i = 0; i < n; i++) nodes.push(await startNode(t, config, env, i === 0, bus))
	return {
		t,
		nodes,
		async account(balance, token = {}) {
			const a = await nodes[0]!.admin('/api/accounts', { body: { name: 'acct', balance } })
			if (a.status !== 201) throw new Error(`account: ${JSON.stringify(a.body)}`)
			const k = await nodes[0]!.admin('/api/tokens', { body: { account_id: a.body.id, name: 'key', ...token } })
			if (k.status !== 201) throw new Error(`token: ${JSON.stringify(k.body)}`)
			return { accountId: a.body.id, tokenId: k.body.id, key: k.body.key }
		},
		async close() {
			for (const node of nodes) await node.stop()
			await t.drop()
		},
	}
}

/** Every usage row of an account (all pages), as the management API gives them. */
export async function allUsage(node: Instance, accountId: number): Promise<any[]> {
	const rows: any[] = []
	let cursor: string | undefined
	for (;;) {
		const r = await node.admin(`/api/usage?account_id=${accountId}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
		if (r.status !== 200) throw new Error(`usage: ${JSON.stringify(r.body)}`)
		rows.push(...r.body.data)
		if (!r.body.next_cursor) return rows
		cursor = r.body.next_cursor
	}
}

/** The account's balance column and leases straight from the database (no view, nothing counted twice). */
export async function dbState(t: TestDb, accountId: number) {
	// One statement, so one snapshot: read one table at a time, a lease handed back (or a flush) between two reads
	// would count its money twice or not at all.
	const [r] = await t.db.sql.query<{ balance: string; leased: string; in_use: string; leases: string; credits: string; usage_cost: string; usage_rows: string }>(
		`SELECT (SELECT balance FROM accounts WHERE id = $1) AS balance,
			(SELECT COALESCE(SUM(amount), 0) FROM ledger_leases WHERE account_id = $1) AS leased,
			(SELECT COALESCE(SUM(in_use), 0) FROM ledger_leases WHERE account_id = $1) AS in_use,
			(SELECT COUNT(*) FROM ledger_leases WHERE account_id = $1) AS leases,
			(SELECT COALESCE(SUM(amount), 0) FROM credits WHERE account_id = $1) AS credits,
			(SELECT COALESCE(SUM(cost), 0) FROM usage_logs WHERE account_id = $1) AS usage_cost,
			(SELECT COUNT(*) FROM usage_logs WHERE account_id = $1) AS usage_rows`,
		[accountId],
	)
	return {
		balance: Number(r!.balance),
		leased: Number(r!.leased),
		inUse: Number(r!.in_use),
		leases: Number(r!.leases),
		credits: Number(r!.credits),
		usageCost: Number(r!.usage_cost),
		usageRows: Number(r!.usage_rows),
	}
}
