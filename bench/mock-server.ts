/**
 * The mock upstream process: the OpenAI and Anthropic mocks of test/mocks (instant), plus two OpenAI mocks whose
 * streams pace their chunks: slow (the memory scenario) and paced (1 ms apart: each chunk a read of its own, as a
 * vendor's tokens arrive), and a control endpoint `GET /counts` that reports how
 * many POST requests each mock received, so the harness can check that the upstream saw as many requests as
 * the clients completed. Prints `{"openai":…,"anthropic":…,"slow":…,"paced":…,"control":…}` (ports) on stdout.
 *
 * Environment: UPSTREAM_KEY (the key the mocks accept), MOCK_DELAY_MS (before every response's headers),
 * SLOW_CHUNK_MS (between chunks of the slow mock).
 * @module
 */
import { startAnthropicMock, startOpenAIMock } from '../test/mocks'

/** POST requests received, by listening port. */
const counts: Record<number, number> = {}

// The mocks' own recorder keeps every request (headers and body) in memory, too costly for a benchmark, so it is
// off (`record: false`) and the requests are counted here instead: every `Bun.serve` this process starts gets its
// fetch handler wrapped with a counter.
type ServeOptions = Parameters<typeof Bun.serve>[0]
type FetchHandler = (req: Request, server: unknown) => Response | Promise<Response>
const serve = Bun.serve
const countingServe = (opts: ServeOptions) => {
	const inner = (opts as { fetch: FetchHandler }).fetch
	let port = 0
	const server = serve({
		...opts,
		fetch(req: Request, srv: unknown) {
			if (req.method === 'POST') counts[port] = (counts[port] ?? 0) + 1
			return inner(req, srv)
		},
	} as ServeOptions)
	port = server.port ?? 0
	return server
}
;(Bun as { serve: unknown }).serve = countingServe

const apiKey = process.env.UPSTREAM_KEY ?? 'bench-upstream-key'
const delayMs = Number(process.env.MOCK_DELAY_MS ?? 0)
const slowChunkMs = Number(process.env.SLOW_CHUNK_MS ?? 500)
const openai = await startOpenAIMock({ apiKey, record: false, delayMs })
const anthropic = await startAnthropicMock({ apiKey, record: false, delayMs })
const slow = await startOpenAIMock({ apiKey, record: false, delayMs, chunkDelayMs: slowChunkMs })
const paced = await startOpenAIMock({ apiKey, record: false, delayMs, chunkDelayMs: 1 })
const control = serve({
	hostname: '127.0.0.1',
	port: 0,
	fetch: () => Response.json(counts),
})
console.log(JSON.stringify({ openai: openai.port, anthropic: anthropic.port, slow: slow.port, paced: paced.port, control: control.port }))
// Ends with the orchestrator: it closes our stdin (or kills us) when the run is over.
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
