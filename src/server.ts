/**
 * Boot: environment → services (database opened and migrated, config applied) → app → listen. Started by
 * src/index.ts once the process runs with the settings it needs. Exits with a readable message (never a stack trace)
 * when the configuration is wrong.
 * @module
 */
import { createApp } from './app'
import { onReloadSignal } from './config/config-reload'
import { readTls, type TlsOptions, tlsProblem } from './http/tls'
import { type Env, loadEnv } from './config/env'
import { bootstrapAdmin } from './modules/console'
import { shutdownSessions } from './relay/socket-relay'
import { cutStreams } from './relay/stream-relay'
import { purgeKeptThinking } from './modules/chat/kept-thinking'
import { purgeMessageThreads } from './modules/messages/threads'
import { purgeStoredResponses } from './modules/responses/ownership'
import { purgeStoredCompletions } from './modules/chat-stored/store'
import { purgeInteractions } from './modules/interactions/store'
import { purgeGeminiCaches } from './modules/gemini-caches/store'
import { purgeContainers } from './modules/anthropic-files/outputs'
import { createServices } from './services'
import { sweepSpool } from './http/body-spool'
import { startTaskPoller } from './tasks/poller'

/** How long the streams cut at the end of the grace period may take to send their error event and end. */
const STREAM_CUT_WAIT_MS = 1_000

/** A stop signal this soon after the first is the same one relayed (by `bun run`, `npx`): not a second. */
const REPEATED_SIGNAL_MS = 1_000

/** How often recorded response ids past their retention are deleted (modules/responses/ownership.ts). */
const PURGE_EVERY_MS = 6 * 3_600_000

/** What the server listens with, beyond Elysia's defaults. */
export function listenOptions(env: Env, tls?: TlsOptions) {
	return {
		port: env.port,
		hostname: env.host,
		...(tls ? { tls } : {}),
		// Elysia's Bun adapter listens with SO_REUSEPORT unless told not to: a second gateway started on this port would
		// listen as well, and the kernel would split the connections between the two (with PGlite each on its own copy
		// of the database). A port in use must fail the start instead.
		reusePort: false,
		// Streams of slow reasoning models can be silent for minutes; keepalives go out every 15 s, so the socket
		// idle timeout only has to outlast that (WIRE-NOTES §22). 255 s is Bun's maximum.
		idleTimeout: 255,
		// The gateway holds bodies to MAX_JSON_BYTES / MAX_UPLOAD_BYTES itself, in the caller's protocol with the request id
		// (http/request-guard.ts): a declared length before the body is read, one sent without a length as it arrives,
		// before anything reads it whole. Bun's limit answers a bare 413 (no body, no request id) before the app sees the
		// request, at any declared length past it, so it is out of the way; Bun's default, 128 MiB, would be too.
		maxRequestBodySize: Number.MAX_SAFE_INTEGER,
		// An error that escapes every handler is a bare 500: Bun's development page would show the source and the cwd.
		development: false,
	}
}

/**
 * Fails the start at once when the port is taken, before a database is opened (or created, and an administrator
 * password printed) for a server that could not listen. The listen itself, last, still fails if the port was taken
 * in between.
 */
async function checkPort(env: Env, tls?: TlsOptions) {
	let probe: ReturnType<typeof Bun.serve>
	try {
		probe = Bun.serve({ port: env.port, hostname: env.host, reusePort: false, ...(tls ? { tls } : {}), fetch: () => new Response() })
	} catch (e) {
		throw portError(e, env)
	}
	await probe.stop(true)
}

/** A failed listen in words: the port taken, or (HTTPS) the certificate and key refused. */
const portError = (e: unknown, env: Env) =>
	(e as NodeJS.ErrnoException).code === 'EADDRINUSE'
		? new Error(`port ${env.port} on ${env.host} is in use by another process (another Switchboard?): stop it, or set PORT`)
		: ((env.tls && tlsProblem(e, env.tls)) ?? e)

/** `startupNotes`: what the launcher wants logged once the logger exists. */
export async function runServer(startupNotes: string[] = []) {
	try {
		const env = loadEnv()
		const tls = env.tls && (await readTls(env.tls))
		await checkPort(env, tls)
		const svc = await createServices(env)
		for (const note of startupNotes) svc.log.warn(note)
		await bootstrapAdmin(svc)
		const app = createApp(svc)
		const poller = startTaskPoller(svc)
		// Recorded response ids, stored chat completions, message threads, code execution containers past the vendor's retention, and kept thinking, every few hours (and at start).
		const purge = () => {
			void purgeStoredResponses(svc).catch((e) => svc.log.warn('stored response purge failed', { error: String(e) }))
			void purgeMessageThreads(svc).catch((e) => svc.log.warn('message thread purge failed', { error: String(e) }))
			void purgeKeptThinking(svc.db).catch((e) => svc.log.warn('kept thinking purge failed', { error: String(e) }))
			void purgeStoredCompletions(svc.db).catch((e) => svc.log.warn('stored chat completion purge failed', { error: String(e) }))
			void purgeInteractions(svc.db).catch((e) => svc.log.warn('interaction purge failed', { error: String(e) }))
			void purgeContainers(svc.db).catch((e) => svc.log.warn('container purge failed', { error: String(e) }))
			void purgeGeminiCaches(svc.db).catch((e) => svc.log.warn('gemini cache purge failed', { error: String(e) }))
		}
		purge()
		void sweepSpool()
		const purger = setInterval(purge, PURGE_EVERY_MS)
		purger.unref?.()
		try {
			app.listen(listenOptions(env, tls))
		} catch (e) {
			clearInterval(purger)
			await poller.stop()
			await svc.close()
			throw portError(e, env)
		}
		svc.log.info('switchboard listening', { url: `${tls ? 'https' : 'http'}://${env.host}:${app.server?.port}`, database: svc.db.kind, bus: svc.bus.kind })
		// What ran to start (migrations, configuration, building every route) runs once, but its compiled code would
		// stay live, and the collector lets the heap grow to about three times what is live before collecting: so it
		// is dropped now, before the first request. Peak RSS under load −12 to −14 MB (bench/README, tenth VM). The
		// collection first: code is not dropped while one is running (as after the first start's migrations).
		Bun.gc(true)
		Bun.shrink()
		// SIGTERM: stop accepting, let open requests and streams finish within the grace period (each settles its bill
		// as it ends), then close the database and exit 0. The grace period running out, or a second signal, cuts them
		// (billed for what they used); a third exits at once.
		const graceMs = env.shutdownGraceMs
		let stoppingAt: number | undefined
		const cutNow = Promise.withResolvers<false>()
		let cutAsked = false
		const stop = async (signal: string) => {
			if (stoppingAt !== undefined) {
				// `bun run server` and `npx bun run server` pass the terminal's Ctrl-C on to the server, which the terminal
				// sent it too: one stop, arriving twice within moments (QA: the drain and the usage flush were skipped).
				if (performance.now() - stoppingAt < REPEATED_SIGNAL_MS) return
				if (cutAsked) return process.exit(0)
				cutAsked = true
				svc.log.warn('second signal: cutting open requests', { signal })
				cutNow.resolve(false)
				return
			}
			stoppingAt = performance.now()
			svc.log.info('shutting down', { signal, grace_ms: graceMs })
			const drained = await Promise.race([app.server!.stop(false).then(() => true), Bun.sleep(graceMs).then(() => false), cutNow.promise])
			if (!drained) {
				if (!cutAsked) svc.log.warn('grace period over: closing remaining connections')
				// The requests this cuts end as if their clients had left: recorded as `shutdown` instead.
				svc.ledger.cutForShutdown()
				// Streams end with their protocol's error event (Anthropic overloaded_error, an OpenAI error chunk) rather
				// than a connection reset, so clients know the answer is incomplete; one that does not read is closed below.
				await cutStreams(STREAM_CUT_WAIT_MS)
				// Realtime and Live sessions: 1001 both ways, their running response or turn billed (Bun's own close would not wait for it).
				await shutdownSessions()
				await app.server!.stop(true)
			}
			clearInterval(purger)
			await poller.stop()
			await svc.close()
			process.exit(0)
		}
		process.on('SIGTERM', () => void stop('SIGTERM'))
		process.on('SIGINT', () => void stop('SIGINT'))
		// Only with a file to read again: without one, SIGHUP keeps its usual meaning (the terminal closed: stop).
		if (env.gatewayConfig) process.on('SIGHUP', onReloadSignal(svc, env.gatewayConfig))
	} catch (e) {
		console.error(`switchboard: cannot start: ${(e as Error).message}`)
		process.exit(1)
	}
}
