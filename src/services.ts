/**
 * Builds everything a running gateway needs from its environment: database (migrated), cipher, bus, key cache,
 * ledger, catalog. `createApp` takes the result; tests build it the same way against PGlite or PostgreSQL.
 * @module
 */
import { type KeyCache, createKeyCache } from './auth/api-key'
import type { PrincipalResolver } from './auth/principal'
import { type Ledger, createLedger } from './billing/ledger'
import { applyGatewayConfig, withQuickStart } from './config/config-apply'
import type { Env } from './config/env'
import { type GatewayConfig, loadGatewayFile } from './config/gateway-file'
import { resolveSecretKey } from './config/secret-key'
import { type Db, openDb } from './db/client'
import { migrate } from './db/migrate'
import { type Bus, memoryBus, redisBus } from './lib/bus'
import { type Logger, createLogger } from './lib/log'
import { type Cipher, createCipher } from './lib/secrets'
import { type RateLimiter, createRateLimiter } from './limits/rate-limit'
import { type Metrics, createMetrics } from './metrics/gateway-metrics'
import { type ChannelHealthTracker, createChannelHealth } from './routing/health'
import { type Catalog, createCatalog } from './routing/catalog'

export type Services = {
	env: Env
	db: Db
	cipher: Cipher
	bus: Bus
	keys: KeyCache
	ledger: Ledger
	catalog: Catalog
	limits: RateLimiter
	metrics: Metrics
	health: ChannelHealthTracker
	log: Logger
	/** Extra ways to authenticate management calls (console sessions register here). */
	principals: PrincipalResolver[]
	startedAt: number
	close(): Promise<void>
}

export type ServiceOptions = {
	/** Use this already-open database instead of opening one from env (tests share one PGlite). */
	db?: Db
	/** Gateway config given in code (tests), applied after the file's. */
	config?: GatewayConfig
	log?: Logger
}

export async function createServices(env: Env, opts: ServiceOptions = {}): Promise<Services> {
	const log = opts.log ?? createLogger(env.logLevel)
	const db = opts.db ?? (await openDb(env.databaseUrl, env.databaseUrl ? undefined : env.dataDir))
	const applied = await migrate(db.sql)
	if (applied.length) log.info('migrations applied', { applied })
	const cipher = await createCipher(await resolveSecretKey(env))
	let bus: Bus = memoryBus()
	if (env.redisUrl) {
		try {
			bus = await redisBus(env.redisUrl, (e) => log.warn('redis error', { error: String(e) }))
		} catch (e) {
			log.warn('REDIS_URL unreachable; running with per-instance state', { error: String(e) })
		}
	}
	let cfg: GatewayConfig = { channels: [], models: [] }
	if (env.gatewayConfig) cfg = await loadGatewayFile(env.gatewayConfig)
	if (opts.config) cfg = { channels: [...cfg.channels, ...opts.config.channels], models: [...cfg.models, ...opts.config.models] }
	cfg = withQuickStart(cfg, env.vars)
	if (env.gatewayConfig || opts.config || cfg.channels.length) await applyGatewayConfig(db, cipher, cfg, env.vars, env.gatewayConfig ?? 'config')
	const catalog = await createCatalog(db, cipher, bus)
	const ledger = createLedger(db, { holdTtlSeconds: Number(env.vars.HOLD_TTL_SECONDS ?? 900) })
	const keys = createKeyCache(db, bus)
	await bus.ready()
	const sweeper = setInterval(() => void ledger.sweep().catch((e) => log.warn('hold sweep failed', { error: String(e) })), 60_000)
	sweeper.unref?.()
	return {
		env,
		db,
		cipher,
		bus,
		keys,
		ledger,
		catalog,
		limits: createRateLimiter({ redisUrl: env.redisUrl, log }),
		metrics: createMetrics(),
		health: createChannelHealth(),
		log,
		principals: [],
		startedAt: Date.now(),
		async close() {
			clearInterval(sweeper)
			catalog.stop()
			await bus.close()
			if (!opts.db) await db.sql.close()
		},
	}
}
