/**
 * The server's entry point (`bun run server`, and the compiled binary). It first makes sure the process runs with the
 * fetch limit a gateway needs (src/lib/fetch-limit.ts relaunches it otherwise), then loads and starts the server:
 * loaded after that check, so a relaunch does not load every module twice.
 * @module
 */
import { ensureFetchLimit } from './lib/fetch-limit'

const note = ensureFetchLimit()
const { runServer } = await import('./server')
await runServer(note ? [note] : [])
