/**
 * Server configuration from the environment. Read once at boot; everything else receives the typed object.
 * @module
 */

export type Env = {
	port: number
	host: string
	/** postgres:// URL, or undefined for embedded PGlite. */
	databaseUrl?: string
	/** Connections each instance keeps to PostgreSQL (DATABASE_POOL_SIZE). */
	databasePoolSize: number
	dataDir: string
	redisUrl?: string
	gatewayConfig?: string
	adminKey?: string
	/** Key material for encrypting stored secrets (resolved by secret-key.ts when absent with PGlite). */
	secretKey?: string
	/** Largest JSON body accepted, bytes. */
	maxJsonBytes: number
	/** Largest multipart (audio upload) body accepted, bytes. */
	maxUploadBytes: number
	/** Hosts/CIDRs that server-side URL fetches may reach despite being private (comma-separated). */
	fetchAllow: string[]
	/** Proxies whose X-Forwarded-For names the caller (http/client-address.ts). */
	trustedProxies: string[]
	/** Process-level env holding vendor keys for `env:NAME` references and quick-start channels. */
	vars: Record<string, string | undefined>
	logLevel: 'debug' | 'info' | 'warn' | 'error'
	/** Serve models that have no price at zero cost (otherwise they answer 403). */
	allowUnpriced: boolean
	/** Further channels tried after the first fails before any byte reached the client. */
	retries: number
	/** A stream silent this long gets an SSE comment, so proxies' idle timeouts do not cut slow reasoning. */
	keepaliveMs: number
	/** Time between rounds of the task and background-response pollers. */
	taskPollIntervalMs: number
	/** Open tasks older than this are failed and refunded. */
	taskMaxAgeMs: number
	/** On SIGTERM, how long open requests may take to finish. */
	shutdownGraceMs: number
}

/**
 * An integer setting: unset or empty is the default (as a compose file's `NAME=` leaves it); anything else that is not
 * an integer of at least `min` stops the start naming the variable, rather than becoming NaN or 0 somewhere (a
 * poller's interval of NaN runs every millisecond; a task age of 0 fails every task at its first poll).
 */
const int = (v: string | undefined, fallback: number, name: string, min = 0): number => {
	if (v === undefined || v.trim() === '') return fallback
	const n = Number(v)
	if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be ${min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`}, got "${v}"`)
	return n
}

/** Default of TASK_MAX_AGE_MS: a task still open after a day was lost upstream or stopped answering. */
const DEFAULT_TASK_MAX_AGE_MS = 24 * 3600_000

export function loadEnv(vars: Record<string, string | undefined> = process.env): Env {
	const url = vars.DATABASE_URL?.trim()
	if (url && !/^postgres(ql)?:\/\//.test(url)) throw new Error(`DATABASE_URL must start with postgres:// (got "${url.split('@').pop()}")`)
	const level = (vars.LOG_LEVEL ?? 'info') as Env['logLevel']
	return {
		port: int(vars.PORT, 3000, 'PORT'),
		host: vars.HOST || '0.0.0.0',
		databaseUrl: url || undefined,
		databasePoolSize: int(vars.DATABASE_POOL_SIZE, 10, 'DATABASE_POOL_SIZE', 1),
		dataDir: vars.DATA_DIR || './data',
		redisUrl: vars.REDIS_URL || undefined,
		gatewayConfig: vars.GATEWAY_CONFIG || undefined,
		adminKey: vars.ADMIN_KEY || undefined,
		secretKey: vars.SECRET_KEY || undefined,
		maxJsonBytes: int(vars.MAX_JSON_BYTES, 8 * 1024 * 1024, 'MAX_JSON_BYTES'),
		maxUploadBytes: int(vars.MAX_UPLOAD_BYTES, 25 * 1024 * 1024, 'MAX_UPLOAD_BYTES'),
		fetchAllow: (vars.FETCH_ALLOW ?? '').split(',').map((s) => s.trim()).filter(Boolean),
		trustedProxies: (vars.TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
		vars,
		logLevel: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info',
		allowUnpriced: ['1', 'true', 'yes'].includes((vars.ALLOW_UNPRICED_MODELS ?? '').toLowerCase()),
		retries: int(vars.RETRIES, 2, 'RETRIES'),
		keepaliveMs: Math.max(100, int(vars.SSE_KEEPALIVE_MS, 15_000, 'SSE_KEEPALIVE_MS')),
		taskPollIntervalMs: int(vars.TASK_POLL_INTERVAL_MS, 15_000, 'TASK_POLL_INTERVAL_MS', 1),
		taskMaxAgeMs: int(vars.TASK_MAX_AGE_MS, DEFAULT_TASK_MAX_AGE_MS, 'TASK_MAX_AGE_MS', 1),
		shutdownGraceMs: int(vars.SHUTDOWN_GRACE_MS, 30_000, 'SHUTDOWN_GRACE_MS'),
	}
}
