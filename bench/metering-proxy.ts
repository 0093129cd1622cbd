/**
 * The floor for a proxy that must read what it relays (to bill a stream it has to see the usage): as bare-proxy.ts,
 * but an event stream is read in JavaScript, chunk by chunk, and written into a direct stream, and a JSON answer is
 * read whole and sent again. Nothing is parsed or checked. `bun bench/ab.ts bare proxy:bench/metering-proxy.ts .`
 * shows how much of the gateway's cost is reading the stream at all and how much is its own work (bench/README).
 * @module
 */
const upstreams = JSON.parse(process.env.UPSTREAMS ?? '[]') as string[]

async function relay(origin: string, req: Request): Promise<Response> {
	const url = new URL(req.url)
	const up = await fetch(origin + url.pathname + url.search, { method: req.method, headers: req.headers, body: await req.arrayBuffer() })
	const type = up.headers.get('content-type') ?? ''
	if (!type.includes('event-stream')) return new Response(await up.arrayBuffer(), { status: up.status, headers: { 'content-type': type } })
	const reader = up.body!.getReader()
	const source = {
		type: 'direct',
		async pull(c: ReadableStreamDirectController) {
			for (let r = await reader.read(); !r.done; r = await reader.read()) {
				c.write(r.value)
				c.flush()
			}
			c.close()
		},
	}
	return new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource), { status: up.status, headers: { 'content-type': type } })
}

const ports = upstreams.map((origin) => Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: (req) => relay(origin, req) }).port)
console.log(JSON.stringify({ ports }))
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
