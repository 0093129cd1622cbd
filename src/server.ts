/**
 * Boot: environment → services (database opened and migrated, config applied) → app → listen. Started by
 * src/index.ts once the process runs with the settings it needs. Exits with a readable message (never a stack trace)
 * when the configuration is wrong.
 * @module
 */
import { createApp } from './app'
import { loadEnv } from './config/env'
import { bootstrapAdmin } from './modules/console'
import { createServices } from './services'
import { startTaskPoller } from './tasks/poller'

/** `startupNotes`: what the launcher wants logged once the logger exists. */
export async function runServer(startupNotes: string[] = []) {
	try {
		const env = loadEnv()
		const svc = await createServices(env)
		for (const note of startupNotes) svc.log.warn(note)
		await bootstrapAdmin(svc)
		const app = createApp(svc)
		const poller = startTaskPoller(svc)
		app.listen({
			port: env.port,
			hostname: env.host,
			// Streams of slow reasoning models can be silent for minutes; keepalives go out every 15 s, so the socket
			// idle timeout only has to outlast that (WIRE-NOTES §22). 255 s is Bun's maximum.
			idleTimeout: 255,
			maxRequestBodySize: Math.max(env.maxJsonBytes, env.maxUploadBytes) + 1024 * 1024,
		})
		svc.log.info('switchboard listening', { url: `http://${env.host}:${app.server?.port}`, database: svc.db.kind, redis: svc.bus.kind === 'redis' })
		// What ran to start (migrations, configuration, building every route) runs once, but its compiled code would
		// stay live, and the collector lets the heap grow to about three times what is live before collecting: so it
		// is dropped now, before the first request. Peak RSS under load −12 to −14 MB (bench/README, tenth VM). The
		// collection first: code is not dropped while one is running (as after the first start's migrations).
		Bun.gc(true)
		Bun.shrink()
		// SIGTERM: stop accepting, let open requests and streams finish within the grace period (each settles its bill
		// as it ends), then close the database and exit 0. A second signal, or the grace period running out, cuts them.
		const graceMs = Number(env.vars.SHUTDOWN_GRACE_MS ?? 30_000)
		let stopping = false
		const stop = async (signal: string) => {
			if (stopping) return process.exit(0)
			stopping = true
			svc.log.info('shutting down', { signal, grace_ms: graceMs })
			const drained = await Promise.race([app.server!.stop(false).then(() => true), Bun.sleep(graceMs).then(() => false)])
			if (!drained) {
				svc.log.warn('grace period over: closing remaining connections')
				await app.server!.stop(true)
			}
			await poller.stop()
			await svc.close()
			process.exit(0)
		}
		process.on('SIGTERM', () => void stop('SIGTERM'))
		process.on('SIGINT', () => void stop('SIGINT'))
	} catch (e) {
		console.error(`switchboard: cannot start: ${(e as Error).message}`)
		process.exit(1)
	}
}
