/**
 * The server's entry point (`bun run server`, and the compiled binary). It first makes sure the process runs with the
 * runtime settings a gateway needs (src/lib/runtime-settings.ts relaunches it otherwise), then loads and starts the
 * server: loaded after that check, so a relaunch does not load every module twice. `healthcheck` as the first
 * argument probes a running server instead (src/healthcheck.ts).
 * @module
 */
import { ensureRuntimeSettings } from './lib/runtime-settings'

// Both `bun src/index.ts healthcheck` and the compiled binary's `switchboard healthcheck` put it at argv[2].
if (process.argv[2] === 'healthcheck') {
	const { healthcheck } = await import('./healthcheck')
	process.exit(await healthcheck())
}
const note = ensureRuntimeSettings()
const { runServer } = await import('./server')
await runServer(note ? [note] : [])
