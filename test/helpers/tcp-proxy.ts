/**
 * A TCP relay in front of a real server (Redis) that a test can cut and restore, to simulate an outage: `cut()` stops
 * listening (new connections are refused) and closes every relayed connection; `stall()` silently drops traffic;
 * `restore()` listens and relays again on the same port. Start it cut to simulate a server that is down when a client starts.
 *
 * @example
 * const proxy = await startTcpProxy(6379)
 * const bus = await redisBus(`redis://127.0.0.1:${proxy.port}/0`, () => {})
 * proxy.cut()
 * await proxy.restore()
 */
import type { Socket, TCPSocketListener } from 'bun'

export type TcpProxy = {
	readonly port: number
	/** Whether connections are accepted now. */
	readonly up: boolean
	/** Refuses new connections and closes the open ones, both sides. */
	cut(): void
	/** Keeps every connection open but drops what either side sends (a peer that died without closing). */
	stall(): void
	/** Accepts connections again (same port) and relays again after a stall. */
	restore(): Promise<void>
	stop(): void
}

type Link = { upstream?: Socket<undefined>; queued: Uint8Array[]; closed: boolean }

export async function startTcpProxy(targetPort: number, opts: { targetHost?: string; startCut?: boolean } = {}): Promise<TcpProxy> {
	const host = opts.targetHost ?? '127.0.0.1'
	const links = new Set<Socket<Link>>()
	let listener: TCPSocketListener<Link> | undefined
	let port = 0
	let stalled = false

	const end = (client: Socket<Link>) => {
		client.data.closed = true
		links.delete(client)
		client.data.upstream?.end()
		client.end()
	}

	const listen = (p: number) =>
		Bun.listen<Link>({
			hostname: '127.0.0.1',
			port: p,
			socket: {
				open(client) {
					client.data = { queued: [], closed: false }
					links.add(client)
					Bun.connect<undefined>({
						hostname: host,
						port: targetPort,
						socket: {
							data: (_u, bytes) => void (stalled || client.write(bytes)),
							close: () => end(client),
							error: () => end(client),
						},
					}).then(
						(upstream) => {
							if (client.data.closed) return void upstream.end()
							client.data.upstream = upstream
							for (const b of client.data.queued) upstream.write(b)
							client.data.queued = []
						},
						() => end(client),
					)
				},
				data(client, bytes) {
					if (stalled) return
					if (client.data.upstream) client.data.upstream.write(bytes)
					else client.data.queued.push(new Uint8Array(bytes))
				},
				close: (client) => end(client),
				error: (client) => end(client),
			},
		})

	function cut() {
		listener?.stop(true)
		listener = undefined
		for (const c of [...links]) end(c)
	}

	// A free port first (a cut proxy must still own a port the client can be pointed at).
	const probe = listen(0)
	port = probe.port
	if (opts.startCut) probe.stop(true)
	else listener = probe

	return {
		get port() {
			return port
		},
		get up() {
			return listener !== undefined
		},
		cut,
		stall() {
			stalled = true
		},
		async restore() {
			stalled = false
			if (listener) return
			// The port was just released; retry briefly should the kernel still hold it.
			for (let i = 0; ; i++) {
				try {
					listener = listen(port)
					return
				} catch (e) {
					if (i >= 50) throw e
					await Bun.sleep(20)
				}
			}
		},
		stop: cut,
	}
}
