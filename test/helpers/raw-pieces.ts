/**
 * Sends one raw HTTP/1.1 request and reports the pieces the socket delivered, each with the ms since the request
 * was written. Run in its own process (`rawPieces`): a client in the server's process reads only after the server's
 * JavaScript has run, so two writes in one turn would reach it as one piece.
 *   bun test/helpers/raw-pieces.ts PORT BASE64_REQUEST   → prints [{"at":…,"text":"…"},…]
 * @module
 */
import { join } from 'node:path'

if (import.meta.main) {
	const [port, request] = Bun.argv.slice(2)
	const pieces: { at: number; text: string }[] = []
	const decoder = new TextDecoder()
	let sent = 0
	await new Promise<void>((resolve, reject) =>
		Bun.connect({
			hostname: '127.0.0.1',
			port: Number(port),
			socket: {
				open(s) {
					sent = performance.now()
					s.write(Buffer.from(request!, 'base64'))
				},
				data: (_s, d) => void pieces.push({ at: performance.now() - sent, text: decoder.decode(d) }),
				close: () => resolve(),
				error: (_s, e) => reject(e),
			},
		}).catch(reject),
	)
	console.log(JSON.stringify(pieces))
}

/** Runs the request from another process and returns what its socket received, piece by piece. */
export async function rawPieces(port: number, request: string): Promise<{ at: number; text: string }[]> {
	const proc = Bun.spawn(['bun', join(import.meta.dir, 'raw-pieces.ts'), String(port), Buffer.from(request).toString('base64')], { stdout: 'pipe', stderr: 'inherit' })
	const out = await new Response(proc.stdout).text()
	if ((await proc.exited) !== 0) throw new Error(`raw-pieces exited ${proc.exitCode}`)
	return JSON.parse(out) as { at: number; text: string }[]
}

/** A POST with a JSON body and `Connection: close`, as raw HTTP/1.1. */
export function rawPost(host: string, path: string, headers: Record<string, string>, body: string): string {
	const head = Object.entries({ ...headers, host, connection: 'close', 'content-length': String(Buffer.byteLength(body)) })
		.map(([k, v]) => `${k}: ${v}\r\n`)
		.join('')
	return `POST ${path} HTTP/1.1\r\n${head}\r\n${body}`
}
