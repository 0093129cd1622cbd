/**
 * Every setting the server reads is checked at start, through one parser (src/config/env-vars.ts): a value it cannot
 * use stops the start naming the variable. Before, LOG_LEVEL, LEDGER_*, HOLD_*, LEASE_IDLE_MS, BREAKER_*, MCP_*,
 * ALLOW_UNPRICED_MODELS and the rest fell back to their defaults without a word (`LEDGER_FLUSH_MS=100ms` flushed every
 * 100 ms, `LOG_LEVEL=verbose` logged at info, `ALLOW_UNPRICED_MODELS=ture` refused unpriced models), and
 * `SSE_KEEPALIVE_MS=50` was raised to 100 unannounced. (README's table of them: test/integration/admin/readme.test.ts.)
 */
import { describe, expect, it } from 'bun:test'
import { loadEnv } from '../../../src/config/env'
import { startUntilExit } from '../../helpers/start-process'


const start = (env: Record<string, string>) => startUntilExit('env-refusals', env)

/** Settings that used to fall back to their defaults, each with a value an operator might write by mistake. */
const BAD: Record<string, string> = {
	LOG_LEVEL: 'verbose',
	LEDGER_FLUSH_MS: '100ms',
	LEDGER_FLUSH_ROWS: '0',
	LEDGER_FLUSH_GAP_MS: '-5',
	LEASE_IDLE_MS: '5s',
	HOLD_TTL_SECONDS: '1m',
	HOLD_SWEEP_MS: 'often',
	BREAKER_THRESHOLD: '0',
	BREAKER_BASE_MS: '1.5',
	BREAKER_MAX_MS: '5min',
	MCP_MAX_ROUNDS: 'eight',
	MCP_CALL_TIMEOUT_MS: '0',
	MCP_CONNECT_TIMEOUT_MS: '10s',
	MCP_MAX_RESPONSE_BYTES: '1MiB',
	ALLOW_UNPRICED_MODELS: 'ture',
	SSE_KEEPALIVE_MS: '50',
	DATABASE_POOL_SIZE: 'ten',
	PUBLIC_URL: 'gw.example.com',
	REDIS_URL: 'localhost:6379',
	TRUSTED_PROXIES: '10.0.0.0/33',
	FETCH_ALLOW: 'intranet.local,10.0.0.0/40',
	PORT: '70000',
	OPENAI_BASE_URL: 'api.openai.com/v1',
	BUN_CONFIG_MAX_HTTP_REQUESTS: 'lots',
}

describe('settings refused at start', () => {
	it('should refuse to start on any setting it cannot use, naming each variable and the value', async () => {
		const r = await start(BAD)
		expect(r.code).toBe(1)
		expect(r.stderr).toContain('switchboard: cannot start')
		for (const [name, value] of Object.entries(BAD)) {
			expect(r.stderr).toContain(`${name} must`)
			expect(r.stderr).toContain(`"${value}"`)
		}
		// Nothing else was started: no stack trace, no database message.
		expect(r.stderr).not.toContain('    at ')
	}, 30_000)

	it('should refuse one bad setting alone (LOG_LEVEL), saying what it takes', async () => {
		const r = await start({ LOG_LEVEL: 'verbose' })
		expect(r.code).toBe(1)
		expect(r.stderr).toContain('LOG_LEVEL must be one of debug, info, warn, error, got "verbose"')
	}, 30_000)

	it('should refuse a circuit breaker whose maximum cool-down is below its base', async () => {
		const r = await start({ BREAKER_BASE_MS: '10000', BREAKER_MAX_MS: '5000' })
		expect(r.code).toBe(1)
		expect(r.stderr).toContain('BREAKER_MAX_MS must be at least BREAKER_BASE_MS (10000)')
	}, 30_000)

	it('should take good values as written, and blank ones as the defaults', () => {
		const env = loadEnv({
			LOG_LEVEL: 'WARN',
			LEDGER_FLUSH_MS: '250',
			HOLD_TTL_SECONDS: '30',
			BREAKER_THRESHOLD: '5',
			MCP_MAX_ROUNDS: '2',
			ALLOW_UNPRICED_MODELS: 'no',
			DATABASE_POOL_SIZE: '',
			TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8, ::1',
			FETCH_ALLOW: 'Intranet.Example, 192.168.0.0/16',
			PUBLIC_URL: 'https://gw.example.com/',
		})
		expect(env.logLevel).toBe('warn')
		expect(env.ledger).toMatchObject({ flushMs: 250, ttlSeconds: 30, flushRows: 128, idleMs: 5000 })
		expect(env.breaker.threshold).toBe(5)
		expect(env.mcp.maxRounds).toBe(2)
		expect(env.allowUnpriced).toBe(false)
		expect(env.databasePoolSize).toBe(10)
		expect(env.trustedProxies).toEqual(['127.0.0.1', '10.0.0.0/8', '::1'])
		expect(env.fetchAllow).toEqual(['intranet.example', '192.168.0.0/16'])
		expect(env.publicUrl).toBe('https://gw.example.com/')
	})
})
