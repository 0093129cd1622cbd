/**
 * The server's entry point (`bun run server`, and the compiled binary). It first makes sure the process runs with the
 * runtime settings a gateway needs (src/lib/runtime-settings.ts relaunches it otherwise), then loads and starts the
 * server: loaded after that check, so a relaunch does not load every module twice. With an argument it runs that
 * command instead (src/cli.ts: healthcheck, version, help).
 * @module
 */
import { ensureRuntimeSettings } from './lib/runtime-settings'

// Both `bun src/index.ts healthcheck` and the compiled binary's `switchboard healthcheck` put it at argv[2].
const args = process.argv.slice(2)
if (args.length > 0) {
	const { runCommand } = await import('./cli')
	process.exit(await runCommand(args))
}
const note = ensureRuntimeSettings()
const { runServer } = await import('./server')
await runServer(note ? [note] : [])
