/**
 * The floor: the least a Bun reverse proxy can do (forward method, path, headers and body; stream the answer
 * back). One listener per upstream origin given in UPSTREAMS (JSON array); prints `{"ports":[…]}`.
 * @module
 */
const upstreams = JSON.parse(process.env.UPSTREAMS ?? '[]') as string[]
const ports = upstreams.map(
	(origin) =>
		Bun.serve({
			hostname: '127.0.0.1',
			port: 0,
			idleTimeout: 0,
			fetch(req) {
				const url = new URL(req.url)
				return fetch(origin + url.pathname + url.search, { method: req.method, headers: req.headers, body: req.body })
			},
		}).port,
)
console.log(JSON.stringify({ ports }))
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
