/** A raw WebSocket client of the gateway's Realtime route, shared by the realtime tests. */

export type Client = {
	ws: WebSocket
	frames: Array<string | ArrayBuffer>
	closed: Promise<{ code: number; reason: string }>
	next(type: string): Promise<any>
}

/** A raw WebSocket client that keeps every frame, and waits for an event of a given type. */
export async function connectRealtime(url: string, opts: { key?: string; protocols?: string[] } = {}): Promise<Client> {
	const ws = new WebSocket(url, {
		headers: opts.key ? { authorization: `Bearer ${opts.key}` } : {},
		protocols: opts.protocols ?? ['realtime'],
	} as unknown as string[])
	ws.binaryType = 'arraybuffer'
	const frames: Array<string | ArrayBuffer> = []
	let seen = 0
	const waiters: Array<() => void> = []
	ws.addEventListener('message', (e) => {
		frames.push(e.data as string | ArrayBuffer)
		for (const w of waiters.splice(0)) w()
	})
	const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })))
	await new Promise<void>((resolve, reject) => {
		ws.addEventListener('open', () => resolve())
		ws.addEventListener('error', () => reject(new Error('websocket error')))
	})
	const next = async (type: string) => {
		for (;;) {
			while (seen < frames.length) {
				const f = frames[seen++]!
				if (typeof f === 'string' && JSON.parse(f).type === type) return JSON.parse(f)
			}
			await Promise.race([new Promise<void>((r) => waiters.push(r)), closed.then(() => Bun.sleep(0))])
			if (seen >= frames.length && ws.readyState === WebSocket.CLOSED) throw new Error(`closed before ${type}`)
		}
	}
	return { ws, frames, closed, next }
}

/** The gateway's HTTP answer to a WebSocket handshake it refuses (status and JSON body). */
export async function refusedRealtimeHandshake(appUrl: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
	const port = Number(new URL(appUrl).port)
	const lines = [
		`GET ${path} HTTP/1.1`,
		`host: 127.0.0.1:${port}`,
		'upgrade: websocket',
		'connection: Upgrade',
		'sec-websocket-version: 13',
		'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==',
		...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
		'',
		'',
	]
	let text = ''
	await new Promise<void>((resolve, reject) =>
		Bun.connect({
			hostname: '127.0.0.1',
			port,
			socket: {
				open: (s) => void s.write(lines.join('\r\n')),
				data: (s, d) => {
					text += new TextDecoder().decode(d)
					const [head, body = ''] = text.split('\r\n\r\n')
					const len = Number(/content-length: (\d+)/i.exec(head!)?.[1] ?? -1)
					if (len >= 0 && Buffer.byteLength(body) >= len) s.end()
				},
				close: () => resolve(),
				error: (_s, e) => reject(e),
			},
		}).catch(reject),
	)
	const [head, body = ''] = text.split('\r\n\r\n')
	return { status: Number(head!.split(' ')[1]), body: JSON.parse(body) }
}

/** Polls until `check` passes (settlement runs as the sockets close). */
export async function eventually(check: () => Promise<void>, ms = 3000) {
	const until = Date.now() + ms
	for (;;) {
		try {
			return await check()
		} catch (e) {
			if (Date.now() > until) throw e
			await Bun.sleep(20)
		}
	}
}

