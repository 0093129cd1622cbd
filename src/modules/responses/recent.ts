/**
 * What an instance keeps in memory of the account-owned things it answered recently (converted-items.ts: output
 * items, Response copies), so the usual next turn on the same instance reads no database: bounded by count, total
 * size and age, the oldest dropped first. A miss is never an answer, only a reason to ask the database.
 * @module
 */

type Entry<V> = { accountId: number; value: V; expires: number; size: number }

export type Recent<V> = {
	/** The account's value under `key`, if held and not expired. */
	get(accountId: number, key: string): V | undefined
	/** Holds `value` (of `size`, e.g. its JSON length); a value larger than the whole budget is not held. */
	set(accountId: number, key: string, value: V, size: number): void
	delete(key: string): void
	clear(): void
}

export function recent<V>(opts: { limit: number; bytes: number; ttlMs: number; now: () => number }): Recent<V> {
	// A Map iterates in insertion order: the first key is the oldest.
	const entries = new Map<string, Entry<V>>()
	let bytes = 0
	const drop = (key: string) => {
		const e = entries.get(key)
		if (!e) return
		bytes -= e.size
		entries.delete(key)
	}
	return {
		get(accountId, key) {
			const e = entries.get(key)
			if (!e || e.accountId !== accountId) return undefined
			if (e.expires <= opts.now()) {
				drop(key)
				return undefined
			}
			return e.value
		},
		set(accountId, key, value, size) {
			drop(key)
			if (size > opts.bytes) return
			entries.set(key, { accountId, value, expires: opts.now() + opts.ttlMs, size })
			bytes += size
			while (entries.size > opts.limit || bytes > opts.bytes) drop(entries.keys().next().value!)
		},
		delete: drop,
		clear() {
			entries.clear()
			bytes = 0
		},
	}
}
