/**
 * Server configuration from the environment. Read once at boot; everything else receives the typed object.
 * @module
 */
import { LEDGER_DEFAULTS } from '../billing/ledger'
import { type CorsPolicy, corsPolicy, isCorsEntry } from '../http/cors'
import type { TlsFiles } from '../http/tls'
import { type McpLimits, readMcpLimits } from '../mcp/config'
import { DEFAULT_MAX_FETCHED_URLS } from '../relay/images'
import { DEFAULT_HEALTH } from '../routing/health'
import { envReader, isCidr4, isHostName, isIpv4, isIpv6, MAX_TIMER_MS } from './env-vars'

export type Env = {
	port: number
	host: string
	/** HTTPS on the listen port (TLS_CERT_FILE, TLS_KEY_FILE, TLS_KEY_PASSPHRASE); undefined: plain HTTP. */
	tls?: TlsFiles
	/** postgres:// URL, or undefined for embedded PGlite. */
	databaseUrl?: string
	dataDir: string
	redisUrl?: string
	/** Put before every Redis key and pub/sub channel (REDIS_PREFIX): deployments sharing one Redis stay apart. */
	redisPrefix: string
	gatewayConfig?: string
	adminKey?: string
	/** Key material for encrypting stored secrets (resolved by secret-key.ts when absent with PGlite). */
	secretKey?: string
	/** Largest JSON body accepted, bytes. */
	maxJsonBytes: number
	/** Largest multipart (audio upload) body accepted, bytes. */
	maxUploadBytes: number
	/** Largest file uploaded through Gemini's Files API, bytes (MAX_GEMINI_FILE_BYTES; modules/gemini-files). */
	maxGeminiFileBytes: number
	/** Largest JSONL upload kept to run as a Gemini batch's input file, bytes (MAX_GEMINI_BATCH_FILE_BYTES; gemini-files/upload.ts). */
	maxGeminiBatchFileBytes: number
	/**
	 * Bounds of the Gemini context caches an account keeps in the database, unbilled (modules/gemini-caches): their
	 * longest life (MAX_GEMINI_CACHE_TTL_SECONDS), how many live at once (MAX_GEMINI_CACHES) and their stored bytes in
	 * all (MAX_GEMINI_CACHE_BYTES).
	 */
	geminiCaches: { maxTtlMs: number; maxPerAccount: number; maxBytesPerAccount: number }
	/** Hosts/CIDRs that server-side URL fetches may reach despite being private (comma-separated). */
	fetchAllow: string[]
	/**
	 * Hosts (exact, or `*.suffix`) besides the clouds' own that a channel saved through the management API may send
	 * credentials made from the host's identity to (AMBIENT_ENDPOINTS; providers/ambient-endpoints.ts).
	 */
	ambientEndpoints: string[]
	/** Image and document URLs the gateway downloads for one request at most (FETCH_MAX_URLS; relay/images.ts). */
	maxFetchedUrls: number
	/** Proxies whose X-Forwarded-For names the caller (http/client-address.ts). */
	trustedProxies: string[]
	/** Origins whose pages may call the model APIs from a browser (CORS_ORIGINS; http/cors.ts). */
	cors: CorsPolicy
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
	/** Longest a Responses API WebSocket connection stays open (RESPONSES_WS_MAX_AGE_MS; OpenAI's 60 minutes; modules/responses/socket.ts). */
	responsesWsMaxAgeMs: number
	/** The longest a request's body may take to arrive in full, from its headers (http/body-deadline.ts). */
	bodyReadTimeoutMs: number
	/** PostgreSQL connections per instance (DATABASE_POOL_SIZE). */
	databasePoolSize: number
	/** Lease expiry and sweep (HOLD_*), flush cadence (LEDGER_FLUSH_*) and idle lease return (LEASE_IDLE_MS). */
	ledger: { ttlSeconds: number; sweepMs: number; flushMs: number; flushRows: number; flushGapMs: number; idleMs: number }
	/** Channel circuit breaker (BREAKER_*). */
	breaker: { threshold: number; baseMs: number; maxMs: number }
	/** Bounds of the MCP tool loop (MCP_*). */
	mcp: McpLimits
	/** Base of URLs handed out (PUBLIC_URL); undefined: the request's origin. */
	publicUrl?: string
	/** Bearer token GET /metrics requires (METRICS_TOKEN). */
	metricsToken?: string
	/** The console administrator created at the first start (ADMIN_USERNAME, ADMIN_PASSWORD). */
	adminUsername: string
	adminPassword?: string
}

/** Default of TASK_MAX_AGE_MS: a task still open after a day was lost upstream or stopped answering. */
const DEFAULT_TASK_MAX_AGE_MS = 24 * 3600_000

/** A duration used as a timer: at least `min` ms, at most what a timer takes. */
const timer = (min = 1) => ({ min, max: MAX_TIMER_MS })

/**
 * Reads and checks every setting (config/env-vars.ts): a value that cannot be used stops the start, naming each
 * variable that is wrong and what it takes. README's configuration table lists them with their ranges.
 */
export function loadEnv(vars: Record<string, string | undefined> = process.env): Env {
	const r = envReader(vars)
	const url = r.text('DATABASE_URL')
	if (url && !/^postgres(ql)?:\/\//.test(url)) r.refuse('DATABASE_URL', `must start with postgres:// (got "${url.split('@').pop()}")`)
	const breaker = {
		threshold: r.int('BREAKER_THRESHOLD', DEFAULT_HEALTH.threshold, { min: 1 }),
		baseMs: r.int('BREAKER_BASE_MS', DEFAULT_HEALTH.baseMs, timer()),
		maxMs: r.int('BREAKER_MAX_MS', DEFAULT_HEALTH.maxMs, timer()),
	}
	if (breaker.maxMs < breaker.baseMs) r.refuse('BREAKER_MAX_MS', `must be at least BREAKER_BASE_MS (${breaker.baseMs}), got "${vars.BREAKER_MAX_MS ?? ''}"`)
	// Bun reads these itself at process start (lib/runtime-settings.ts) and ignores a value it cannot parse.
	r.int('BUN_CONFIG_MAX_HTTP_REQUESTS', 4096, { min: 1, max: 65_535 })
	r.number('BUN_JSC_heapGrowthMaxIncrease', 1, 0)
	r.number('BUN_JSC_minEdenToOldGenerationRatio', 0.4, 0)
	for (const v of ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL', 'GEMINI_BASE_URL']) r.url(v, WEB)
	const certFile = r.text('TLS_CERT_FILE')
	const keyFile = r.text('TLS_KEY_FILE')
	const passphrase = r.secret('TLS_KEY_PASSPHRASE')
	if (!certFile !== !keyFile) r.refuse(certFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE', `must be set with ${certFile ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'} (HTTPS needs both the certificate and its key)`)
	const env: Env = {
		port: r.int('PORT', 3000, { max: 65_535 }),
		host: r.text('HOST') ?? '0.0.0.0',
		tls: certFile && keyFile ? { certFile, keyFile, ...(passphrase ? { passphrase } : {}) } : undefined,
		databaseUrl: url,
		databasePoolSize: r.int('DATABASE_POOL_SIZE', 10, { min: 1, max: 10_000 }),
		dataDir: r.text('DATA_DIR') ?? './data',
		redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:', 'redis+tls:', 'redis+unix:', 'redis+tls+unix:']),
		// Empty by default: the keys (sb:rpm:…) and channels (switchboard:…) stay those of earlier versions.
		redisPrefix: r.text('REDIS_PREFIX') ?? '',
		gatewayConfig: r.text('GATEWAY_CONFIG'),
		adminKey: r.secret('ADMIN_KEY'),
		secretKey: r.secret('SECRET_KEY'),
		// Anthropic's own limit on its standard endpoints (32 MB): an agent's turns with screenshots or PDFs that the
		// vendor takes must not be refused on the way there.
		maxJsonBytes: r.int('MAX_JSON_BYTES', 32 * 1024 * 1024, { min: 1 }),
		maxUploadBytes: r.int('MAX_UPLOAD_BYTES', 25 * 1024 * 1024, { min: 1 }),
		// Google's own limit: 2 GB a file (ai.google.dev/gemini-api/docs/files).
		maxGeminiFileBytes: r.int('MAX_GEMINI_FILE_BYTES', 2 * 1024 * 1024 * 1024, { min: 1 }),
		// Its bytes are kept in the database and read whole when a batch names it.
		maxGeminiBatchFileBytes: r.int('MAX_GEMINI_BATCH_FILE_BYTES', 256 * 1024 * 1024, { min: 0 }),
		geminiCaches: {
			maxTtlMs: r.int('MAX_GEMINI_CACHE_TTL_SECONDS', 7 * 86_400, { min: 1, max: 100 * 365 * 86_400 }) * 1000,
			maxPerAccount: r.int('MAX_GEMINI_CACHES', 100, { min: 0 }),
			maxBytesPerAccount: r.int('MAX_GEMINI_CACHE_BYTES', 64 * 1024 * 1024, { min: 0 }),
		},
		fetchAllow: r.list('FETCH_ALLOW', 'host names, IP addresses or IPv4 CIDRs', (e) => isHostName(e) || isIpv4(e) || isCidr4(e) || isIpv6(e)).map((e) => e.toLowerCase()),
		ambientEndpoints: r.list('AMBIENT_ENDPOINTS', 'host names, IP addresses or *.suffix wildcards', (e) => isHostName(e.replace(/^\*\./, '')) || isIpv4(e) || isIpv6(e)).map((e) => e.toLowerCase().replace(/^\[|\]$/g, '')),
		maxFetchedUrls: r.int('FETCH_MAX_URLS', DEFAULT_MAX_FETCHED_URLS, { min: 1, max: 500 }),
		trustedProxies: r.list('TRUSTED_PROXIES', 'IP addresses or IPv4 CIDRs', (e) => isIpv4(e) || isCidr4(e) || isIpv6(e)),
		cors: corsPolicy(r.text('CORS_ORIGINS') === undefined ? ['*'] : r.list('CORS_ORIGINS', "'*', 'none' or origins (https://chat.example.com)", isCorsEntry)),
		vars,
		logLevel: r.choice('LOG_LEVEL', 'info', ['debug', 'info', 'warn', 'error'] as const),
		allowUnpriced: r.bool('ALLOW_UNPRICED_MODELS', false),
		retries: r.int('RETRIES', 2),
		keepaliveMs: r.int('SSE_KEEPALIVE_MS', 15_000, timer(100)),
		taskPollIntervalMs: r.int('TASK_POLL_INTERVAL_MS', 15_000, timer()),
		taskMaxAgeMs: r.int('TASK_MAX_AGE_MS', DEFAULT_TASK_MAX_AGE_MS, { min: 1 }),
		shutdownGraceMs: r.int('SHUTDOWN_GRACE_MS', 30_000, timer(0)),
		responsesWsMaxAgeMs: r.int('RESPONSES_WS_MAX_AGE_MS', 60 * 60_000, timer()),
		bodyReadTimeoutMs: r.int('BODY_READ_TIMEOUT_MS', 60_000, timer()),
		ledger: {
			ttlSeconds: r.int('HOLD_TTL_SECONDS', 60, { min: 1 }),
			sweepMs: r.int('HOLD_SWEEP_MS', 60_000, timer()),
			flushMs: r.int('LEDGER_FLUSH_MS', LEDGER_DEFAULTS.flushMs, timer()),
			flushRows: r.int('LEDGER_FLUSH_ROWS', LEDGER_DEFAULTS.flushRows, { min: 1 }),
			flushGapMs: r.int('LEDGER_FLUSH_GAP_MS', LEDGER_DEFAULTS.flushGapMs, timer(0)),
			idleMs: r.int('LEASE_IDLE_MS', LEDGER_DEFAULTS.idleMs, timer()),
		},
		breaker,
		mcp: readMcpLimits(r),
		publicUrl: r.url('PUBLIC_URL', WEB),
		metricsToken: r.secret('METRICS_TOKEN'),
		adminUsername: r.text('ADMIN_USERNAME') ?? 'admin',
		adminPassword: r.secret('ADMIN_PASSWORD'),
	}
	r.done()
	return env
}

const WEB = ['http:', 'https:'] as const
