/**
 * Switchboard as a real server process (`bun src/index.ts`) configured against the mock upstreams, on embedded
 * PGlite (a fresh DATA_DIR) or on PostgreSQL (a fresh database, dropped afterwards), with an account and a key
 * created through the management API. Everything billing does in production is on: key check, reservation,
 * settlement and the usage row.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { type Child, spawnChild } from './procs'

export type MockPorts = { openai: number; anthropic: number; slow: number; paced: number; control: number }

/** Public model names the scenarios use; `bench-slow` is served by the slow mock (renamed to a model it knows),
 * `bench-paced` by the paced one (under its own name: no renaming in the relay). */
export const MODELS = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5', slow: 'bench-slow', paced: 'bench-paced', transcription: 'whisper-1' } as const

export type Gateway = {
	kind: 'pglite' | 'postgres'
	child: Child
	port: number
	/** The client key (`sk-…`). */
	key: string
	/** PIDs of the PostgreSQL backends connected to our database (their CPU is not in the gateway's tree). */
	dbBackends(): Promise<number[]>
	/** The key's settled spend and open reservations (micro-USD), and the usage rows when the database is reachable. */
	billing(): Promise<Billing>
	stop(): Promise<void>
}

export type Billing = { spent: number; reserved: number; usageRows?: number }

// $1 and $2 per million tokens are 1 and 2 micro-USD per token, so the expected cost is easy to state exactly.
const price = (name: string) => ({ name, input_per_mtok: 1, output_per_mtok: 2, max_output_tokens: 1024 })

/** The GATEWAY_CONFIG file: one channel per mock, all models priced (unpriced models would answer 403). */
export function gatewayConfig(mock: MockPorts, upstreamKey: string) {
	const origin = (port: number) => `http://127.0.0.1:${port}`
	return {
		channels: [
			{ name: 'bench-openai', type: 'openai', base_url: `${origin(mock.openai)}/v1`, api_key: upstreamKey, models: [MODELS.openai, MODELS.transcription] },
			{ name: 'bench-anthropic', type: 'anthropic', base_url: origin(mock.anthropic), api_key: upstreamKey, models: [MODELS.anthropic] },
			{
				name: 'bench-slow',
				type: 'openai',
				base_url: `${origin(mock.slow)}/v1`,
				api_key: upstreamKey,
				models: [MODELS.slow],
				model_map: { [MODELS.slow]: MODELS.openai },
			},
			{ name: 'bench-paced', type: 'openai', base_url: `${origin(mock.paced)}/v1`, api_key: upstreamKey, models: [MODELS.paced] },
		],
		// bench/upload.ts sends audio for transcription, priced by the minute.
		models: [price(MODELS.openai), price(MODELS.anthropic), price(MODELS.slow), price(MODELS.paced), { name: MODELS.transcription, per_minute: 0.006 }],
	}
}

const BENCH_APP = 'switchboard-bench'

const randomId = () => crypto.randomUUID().replaceAll('-', '').slice(0, 12)

async function api<T>(base: string, adminKey: string, path: string, body: unknown): Promise<T> {
	const res = await fetch(`${base}${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
		body: JSON.stringify(body),
	})
	if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
	return (await res.json()) as T
}

/**
 * Starts one gateway. `postgresUrl` is the server to create the database on (postgres://…/postgres).
 * @example const gw = await startGateway('pglite', mock, { repo, upstreamKey })
 */
export async function startGateway(
	kind: 'pglite' | 'postgres',
	mock: MockPorts,
	opts: { repo: string; upstreamKey: string; postgresUrl: string; startTimeoutMs: number; cpuProf?: string; gcLog?: boolean; env?: Record<string, string> },
): Promise<Gateway> {
	const dir = mkdtempSync(join(tmpdir(), `sb-bench-${kind}-`))
	const configPath = join(dir, 'gateway.json')
	await Bun.write(configPath, JSON.stringify(gatewayConfig(mock, opts.upstreamKey), null, 2))
	const adminKey = `adm-${randomId()}`
	const env: Record<string, string> = { ...opts.env, PORT: '0', HOST: '127.0.0.1', ADMIN_KEY: adminKey, GATEWAY_CONFIG: configPath, DATA_DIR: join(dir, 'data') }
	let admin: postgres.Sql | undefined
	// Our own connection to the gateway's database, to count usage rows; named so its backend is not counted as the gateway's.
	let reader: postgres.Sql | undefined
	let dbName: string | undefined
	if (kind === 'postgres') {
		dbName = `sb_bench_${randomId()}`
		admin = postgres(opts.postgresUrl, { max: 1, onnotice: () => {} })
		await admin.unsafe(`CREATE DATABASE ${dbName}`)
		const u = new URL(opts.postgresUrl)
		u.pathname = `/${dbName}`
		env.DATABASE_URL = u.toString()
		reader = postgres(u.toString(), { max: 1, onnotice: () => {}, connection: { application_name: BENCH_APP } })
		env.SECRET_KEY = `${randomId()}${randomId()}${randomId()}`
	} else {
		// PGlite ignores these, but an inherited DATABASE_URL would switch the gateway to PostgreSQL.
		env.DATABASE_URL = ''
	}
	const cleanup = async () => {
		await reader?.end({ timeout: 5 })
		if (admin && dbName) {
			await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {})
			await admin.end({ timeout: 5 })
		}
		rmSync(dir, { recursive: true, force: true })
	}
	// --cpu-prof writes a Chrome DevTools profile when the process exits (SIGTERM makes it exit cleanly).
	const prof = opts.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProf, '--cpu-prof-name', `switchboard-${kind}.cpuprofile`] : []
	// BENCH_BINARY (a path in the checkout, e.g. dist/switchboard from `bun run build`): what operators deploy, instead of the sources.
	const binary = opts.env?.BENCH_BINARY ?? process.env.BENCH_BINARY
	const cmd = binary ? [join(opts.repo, binary)] : ['bun', ...((opts.env?.BENCH_BUN_FLAGS ?? process.env.BENCH_BUN_FLAGS)?.split(' ').filter(Boolean) ?? []), ...prof, 'src/index.ts']
	const child = spawnChild(`switchboard (${kind})`, cmd, env, opts.repo, { gcLog: opts.gcLog })
	try {
		const line = await child.waitLine((l) => l.includes('switchboard listening'), opts.startTimeoutMs)
		const url = (JSON.parse(line) as { url: string }).url
		const port = Number(new URL(url).port)
		const base = `http://127.0.0.1:${port}`
		const account = await api<{ id: number }>(base, adminKey, '/api/accounts', { name: 'bench', balance: 1_000_000 })
		const token = await api<{ id: number; key: string }>(base, adminKey, '/api/tokens', { account_id: account.id, name: 'bench' })
		return {
			kind,
			child,
			port,
			key: token.key,
			async dbBackends() {
				if (!admin || !dbName) return []
				const rows = await admin.unsafe('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2', [dbName, BENCH_APP])
				return rows.map((r) => Number(r.pid))
			},
			async billing() {
				const res = await fetch(`${base}/api/tokens/${token.id}`, { headers: { authorization: `Bearer ${adminKey}` } })
				if (!res.ok) throw new Error(`GET /api/tokens/${token.id}: ${res.status} ${await res.text()}`)
				const t = (await res.json()) as { spent: number; reserved: number }
				const b: Billing = { spent: Math.round(t.spent * 1e6), reserved: Math.round(t.reserved * 1e6) }
				if (reader) {
					const [row] = await reader.unsafe('SELECT count(*)::int AS n FROM usage_logs')
					b.usageRows = Number(row.n)
				}
				return b
			},
			async stop() {
				await child.stop()
				await cleanup()
			},
		}
	} catch (e) {
		await child.stop()
		await cleanup()
		throw e
	}
}

/** A mock upstream answering at once and one gateway on it, as the profiling tools run them (perf-profile.ts, tail.ts). */
export type Rig = { mock: Child; ports: MockPorts; gw: Gateway; stop(): Promise<void> }

/** Starts a Rig; a gateway that fails to start stops the mock before the error is thrown. */
export async function startRig(kind: 'pglite' | 'postgres', postgresUrl: string, env: Record<string, string> = {}): Promise<Rig> {
	const repo = join(import.meta.dir, '..')
	const upstreamKey = 'bench-upstream-key'
	const mock = spawnChild('mock', ['bun', 'bench/mock-server.ts'], { UPSTREAM_KEY: upstreamKey, MOCK_DELAY_MS: '0', SLOW_CHUNK_MS: '500' }, repo)
	try {
		const ports = await mock.firstJson<MockPorts>(30_000)
		const gw = await startGateway(kind, ports, { repo, upstreamKey, postgresUrl, startTimeoutMs: 180_000, env })
		return {
			mock,
			ports,
			gw,
			async stop() {
				await gw.stop()
				await mock.stop()
			},
		}
	} catch (e) {
		await mock.stop()
		throw e
	}
}
