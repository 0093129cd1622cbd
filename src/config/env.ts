/**
 * Server configuration from the environment. Read once at boot; everything else receives the typed object.
 * @module
 */

export type Env = {
	port: number
	host: string
	/** postgres:// URL, or undefined for embedded PGlite. */
	databaseUrl?: string
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
	/** Process-level env holding vendor keys for `env:NAME` references and quick-start channels. */
	vars: Record<string, string | undefined>
	logLevel: 'debug' | 'info' | 'warn' | 'error'
	/** Serve models that have no price at zero cost (otherwise they answer 403). */
	allowUnpriced: boolean
	/** Further channels tried after the first fails before any byte reached the client. */
	retries: number
	/** A stream silent this long gets an SSE comment, so proxies' idle timeouts do not cut slow reasoning. */
	keepaliveMs: number
}

const int = (v: string | undefined, fallback: number, name: string): number => {
	if (v === undefined || v === '') return fallback
	const n = Number(v)
	if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`)
	return n
}

export function loadEnv(vars: Record<string, string | undefined> = process.env): Env {
	const url = vars.DATABASE_URL?.trim()
	if (url && !/^postgres(ql)?:\/\//.test(url)) throw new Error(`DATABASE_URL must start with postgres:// (got "${url.split('@').pop()}")`)
	const level = (vars.LOG_LEVEL ?? 'info') as Env['logLevel']
	return {
		port: int(vars.PORT, 3000, 'PORT'),
		host: vars.HOST || '0.0.0.0',
		databaseUrl: url || undefined,
		dataDir: vars.DATA_DIR || './data',
		redisUrl: vars.REDIS_URL || undefined,
		gatewayConfig: vars.GATEWAY_CONFIG || undefined,
		adminKey: vars.ADMIN_KEY || undefined,
		secretKey: vars.SECRET_KEY || undefined,
		maxJsonBytes: int(vars.MAX_JSON_BYTES, 8 * 1024 * 1024, 'MAX_JSON_BYTES'),
		maxUploadBytes: int(vars.MAX_UPLOAD_BYTES, 25 * 1024 * 1024, 'MAX_UPLOAD_BYTES'),
		fetchAllow: (vars.FETCH_ALLOW ?? '').split(',').map((s) => s.trim()).filter(Boolean),
		vars,
		logLevel: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info',
		allowUnpriced: ['1', 'true', 'yes'].includes((vars.ALLOW_UNPRICED_MODELS ?? '').toLowerCase()),
		retries: int(vars.RETRIES, 2, 'RETRIES'),
		keepaliveMs: Math.max(100, int(vars.SSE_KEEPALIVE_MS, 15_000, 'SSE_KEEPALIVE_MS')),
	}
}
