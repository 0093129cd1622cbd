/**
 * The server's entry point (`bun run server`, and the compiled binary). It first makes sure the process runs with the
 * runtime settings a gateway needs (src/lib/runtime-settings.ts relaunches it otherwise), then loads and starts the
 * server: loaded after that check, so a relaunch does not load every module twice.
 * @module
 */
import { ensureRuntimeSettings } from './lib/runtime-settings'

const note = ensureRuntimeSettings()
const { runServer } = await import('./server')
await runServer(note ? [note] : [])
