/**
 * A tiny publish/subscribe bus for cache invalidations across instances. With REDIS_URL it uses Redis pub/sub
 * (Bun's native client); without, it is in-process only (one instance).
 * @module
 */

export type Bus = {
	publish(topic: string, message: string): void
	subscribe(topic: string, handler: (message: string) => void): void
	close(): Promise<void>
	/** Resolves once every subscription made so far is active (Redis SUBSCRIBE is asynchronous). */
	ready(): Promise<void>
	readonly kind: 'memory' | 'redis'
	/** Whether Redis answers (health). */
	ping(): Promise<boolean>
}

const PREFIX = 'switchboard:'

export function memoryBus(): Bus {
	const handlers = new Map<string, Set<(m: string) => void>>()
	return {
		kind: 'memory',
		publish(topic, message) {
			for (const h of handlers.get(topic) ?? []) h(message)
		},
		subscribe(topic, handler) {
			const set = handlers.get(topic) ?? new Set()
			set.add(handler)
			handlers.set(topic, set)
		},
		close: async () => {},
		ready: async () => {},
		ping: async () => true,
	}
}

export async function redisBus(url: string, onError: (e: unknown) => void): Promise<Bus> {
	const pub = new Bun.RedisClient(url, { enableOfflineQueue: false, autoReconnect: true })
	const sub = new Bun.RedisClient(url, { autoReconnect: true })
	// Bounded: an unreachable Redis must not hold up the start (the caller falls back to in-process state).
	const timeout = new Promise<never>((_, no) => setTimeout(() => no(new Error(`cannot connect to ${url.replace(/\/\/.*@/, '//')}`)), 2_000))
	try {
		await Promise.race([Promise.all([pub.connect(), sub.connect()]), timeout])
	} catch (e) {
		pub.close()
		sub.close()
		throw e
	}
	const local = memoryBus()
	const pending: Promise<unknown>[] = []
	return {
		kind: 'redis',
		publish(topic, message) {
			local.publish(topic, message) // this instance at once, even if Redis is down
			pub.publish(PREFIX + topic, message).catch(onError)
		},
		subscribe(topic, handler) {
			local.subscribe(topic, handler)
			pending.push(sub.subscribe(PREFIX + topic, (message) => handler(message)).catch(onError))
		},
		async ready() {
			await Promise.all(pending)
		},
		async close() {
			pub.close()
			sub.close()
		},
		async ping() {
			try {
				return (await pub.send('PING', [])) === 'PONG'
			} catch {
				return false
			}
		},
	}
}
