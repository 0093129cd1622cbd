/**
 * Builds everything a running gateway needs from its environment: database (migrated), cipher, bus, key cache,
 * ledger, catalog. `createApp` takes the result; tests build it the same way against PGlite or PostgreSQL.
 * @module
 */
import { type KeyCache, createKeyCache } from './auth/api-key'
import type { PrincipalResolver } from './auth/principal'
import { type Ledger, createLedger } from './billing/ledger'
import { applyGatewayConfig } from './config/config-apply'
import { withQuickStart } from './config/quick-start'
import type { Env } from './config/env'
import { type GatewayConfig, loadGatewayFile } from './config/gateway-file'
import { checkSecretKey, resolveSecretKey } from './config/secret-key'
import { type BodyDeadline, createBodyDeadline } from './http/body-deadline'
import { type Db, openDb } from './db/client'
import { migrate } from './db/migrate'
import { type Bus, memoryBus, redisBus } from './lib/bus'
import { fallbackBus } from './lib/bus-fallback'
import { pgBus } from './lib/pg-bus'
import { type IdleGc, createIdleGc } from './lib/idle-gc'
import { type Logger, createLogger } from './lib/log'
import { type Cipher, createCipher } from './lib/secrets'
import { type RateLimiter, createRateLimiter } from './limits/rate-limit'
import { type Strikes, createStrikes } from './limits/strikes'
import { type Metrics, createMetrics } from './metrics/gateway-metrics'
import { type ChannelHealthTracker, createChannelHealth } from './routing/health'
import { type Catalog, createCatalog } from './routing/catalog'
import { openStreams } from './relay/sse-response'
import { drainingUpstreams } from './relay/stream'

export type Services = {
	env: Env
	db: Db
	cipher: Cipher
	bus: Bus
	keys: KeyCache
	ledger: Ledger
	catalog: Catalog
	limits: RateLimiter
	/** Sign-in and ADMIN_KEY failure counts every instance sees (limits/strikes.ts); none on PGlite, where memory is exact. */
	strikes?: Strikes
	metrics: Metrics
	health: ChannelHealthTracker
	/** The deadline every request body is read under (BODY_READ_TIMEOUT_MS). */
	bodyReads: BodyDeadline
	/** Counts requests; gives memory back after a burst (lib/idle-gc.ts). */
	idleGc: IdleGc
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
	/** Use this bus (tests running several instances in one process share one, as instances share Redis). */
	bus?: Bus
}

export async function createServices(env: Env, opts: ServiceOptions = {}): Promise<Services> {
	const log = opts.log ?? createLogger(env.logLevel)
	// The key first: a start that is refused for want of one must not have migrated the database already.
	const secret = await resolveSecretKey(env)
	const cipher = await createCipher(secret.key)
	// The file and the quick-start variables too: one that cannot be used stops the start before the database is touched.
	let cfg: GatewayConfig = { channels: [], models: [] }
	if (env.gatewayConfig) cfg = await loadGatewayFile(env.gatewayConfig)
	if (opts.config) cfg = { channels: [...cfg.channels, ...opts.config.channels], models: [...cfg.models, ...opts.config.models] }
	cfg = await withQuickStart(cfg, env.vars, (m) => log.warn(m))
	const db = opts.db ?? (await openDb(env.databaseUrl, env.databaseUrl ? undefined : env.dataDir, { worker: true, poolSize: env.databasePoolSize, warn: (m) => log.warn(m) }))
	const applied = await migrate(db.sql)
	if (applied.length) log.info('migrations applied', { applied })
	await checkSecretKey(db.sql, cipher).catch(secret.refuse)
	let bus: Bus = opts.bus ?? memoryBus()
	// On a PostgreSQL that other instances may share, they also listen on it (LISTEN/NOTIFY): the bus without Redis,
	// and with Redis the way out for a change made on an instance that cannot reach Redis (lib/bus-fallback.ts). Never
	// fails for a database that stopped answering: the bus keeps trying, and the caches poll meanwhile.
	const shared = !opts.bus && db.kind === 'postgres' && env.databaseUrl
	const listening = shared
		? pgBus(env.databaseUrl!, (e) => log.warn('bus error', { error: String(e) }), {
				onState: (up, e) =>
					up
						? log.info('postgres bus listening: key cache dropped and catalog reloaded, in case messages were missed')
						: env.redisUrl
							? log.warn('postgres bus down: changes made on an instance that cannot reach Redis cannot arrive, nor leave this one should it lose Redis; reconnecting', { error: String(e) })
							: log.warn('postgres bus down: revocations and catalog changes from other instances cannot arrive, polled meanwhile; reconnecting', { error: String(e) }),
			})
		: undefined
	if (env.redisUrl && !opts.bus) {
		try {
			// Never fails for an unreachable Redis: the bus keeps trying in the background and joins once it answers.
			bus = await redisBus(env.redisUrl, (e) => log.warn('redis error', { error: String(e) }), {
				prefix: env.redisPrefix,
				onState: (up, e) =>
					up
						? log.info('redis bus subscribed: key cache dropped and catalog reloaded, in case messages were missed')
						: log.warn(`redis bus down: revocations and catalog changes from other instances cannot arrive${listening ? ' (changes made here go through PostgreSQL NOTIFY meanwhile)' : ''}; reconnecting`, { error: String(e) }),
			})
		} catch (e) {
			log.warn('REDIS_URL unusable; running with per-instance state', { error: String(e) })
		}
	}
	if (listening) {
		const pg = await listening
		bus = bus.kind === 'redis' ? fallbackBus(bus, pg, (e) => log.warn('bus error', { error: String(e) })) : pg
	}
	const configChanged = (env.gatewayConfig || opts.config || cfg.channels.length) && (await applyGatewayConfig(db, cipher, cfg, env.vars, env.gatewayConfig ?? 'config'))
	const health = createChannelHealth(env.breaker)
	// An edited or re-enabled channel starts with a closed breaker on every instance, as each loads the change. One
	// stored through the management API that sends the host's identity off its cloud is disabled as it loads, said in
	// the log and in its health (routing/stored-identity-check.ts).
	const catalog = await createCatalog(db, cipher, bus, {
		edited: (ids) => ids.forEach((id) => health.reset(id)),
		ambientEndpoints: env.ambientEndpoints,
		refused: (ch, reason) => {
			health.failure(ch.id, reason)
			log.warn('channel disabled: it would send the gateway host\'s identity off its cloud', { channel: ch.name, reason })
		},
	}).catch(secret.refuse)
	// Other instances on this database would keep the old channels and prices until their 30 s backstop reload: tell
	// them, as a change through the management API does (a restart with an unchanged config tells no one).
	if (configChanged) await catalog.changed()
	// Every stored secret opened with it: a generated key is kept from now on (secret-key.ts says why not sooner).
	await secret.save()
	const ledger = createLedger(db, {
		ttlSeconds: env.ledger.ttlSeconds,
		flushMs: env.ledger.flushMs,
		flushRows: env.ledger.flushRows,
		flushGapMs: env.ledger.flushGapMs,
		idleMs: env.ledger.idleMs,
		bus,
		log,
	})
	const keys = createKeyCache(db, bus, Date.now, (scope) => void ledger.reclaim(scope).catch((e) => log.warn('lease give-back failed', { error: String(e) })))
	await bus.ready()
	// Leases left by a process that died are released once they expire (see ledger.ts): sweep now, so a restart
	// after a crash gives the money back without waiting a full interval, and then every HOLD_SWEEP_MS.
	let sweeping: Promise<unknown> = Promise.resolve()
	const sweep = () => {
		sweeping = ledger
			.sweep()
			.then((n) => n && log.info('expired leases released', { count: n }))
			.catch((e) => log.warn('hold sweep failed', { error: String(e) }))
	}
	sweep()
	const sweeper = setInterval(sweep, env.ledger.sweepMs)
	sweeper.unref?.()
	const bodyReads = createBodyDeadline(env.bodyReadTimeoutMs)
	const idleGc = createIdleGc({ busy: () => openStreams() > 0 || drainingUpstreams() > 0 })
	// Redis when configured; else, on PostgreSQL, the database every instance shares.
	const limits = createRateLimiter({ redisUrl: env.redisUrl, prefix: env.redisPrefix, log, db })
	// The same for failed sign-ins and wrong ADMIN_KEY bearers.
	const strikes = createStrikes({ redisUrl: env.redisUrl, prefix: env.redisPrefix, log, db })
	return {
		env,
		db,
		cipher,
		bus,
		keys,
		ledger,
		catalog,
		limits,
		strikes,
		metrics: createMetrics(),
		health,
		bodyReads,
		idleGc,
		log,
		principals: [],
		startedAt: Date.now(),
		async close() {
			clearInterval(sweeper)
			idleGc.stop()
			bodyReads.stop()
			await sweeping
			// Tokens of the last requests still waiting to be counted for the other instances.
			await limits.close()
			await strikes?.close()
			// Unbilled usage and leased money go back to the database before it closes.
			await ledger.close().catch((e) => log.error('ledger close failed: leases stay until the sweeper releases them', { error: String(e) }))
			catalog.stop()
			if (!opts.bus) await bus.close()
			if (!opts.db) await db.sql.close()
		},
	}
}
