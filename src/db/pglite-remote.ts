/**
 * PGlite in its own thread (src/db/pglite-worker.ts, which says why), behind the part of PGlite's interface the
 * gateway and Drizzle use: `query`, `exec`, `transaction`, `close`. A transaction holds PGlite's lock in the worker
 * until it ends here, so statements from outside wait for it, as they do in process.
 * @module
 */
import type { PGlite, Results, Transaction } from '@electric-sql/pglite'
import { type Call, deserialiseError, type Reply } from './pglite-protocol'

type QueryOptions = { rowMode?: 'array' | 'object'; parsers?: Record<number, unknown> }
type Statements = Pick<Transaction, 'query' | 'exec'>

// Distributes Omit over the union of calls, so each keeps its own fields.
type CallBody = Call extends infer C ? (C extends Call ? Omit<C, 'id'> : never) : never

/**
 * The worker's script. In the executable (scripts/build.ts builds it in as a second entry point) this module is part
 * of the bundle at the root of Bun's embedded file system, and the worker sits where it sits under src/.
 */
const workerUrl = () => new URL(import.meta.url.includes('/$bunfs/') ? './db/pglite-worker.ts' : './pglite-worker.ts', import.meta.url).href

export async function openPgliteWorker(dataDir?: string): Promise<PGlite> {
	const worker = new Worker(workerUrl())
	const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
	let next = 0
	let txs = 0
	let failed: Error | undefined
	worker.onmessage = (e: MessageEvent<Reply>) => {
		const w = waiting.get(e.data.id)
		if (!w) return
		waiting.delete(e.data.id)
		if (e.data.error) w.reject(deserialiseError(e.data.error))
		else w.resolve(e.data.ok)
	}
	// A worker that dies fails every call in flight and every later one.
	worker.onerror = (e) => {
		failed = new Error(`the database thread failed: ${e.message}`)
		for (const w of waiting.values()) w.reject(failed)
		waiting.clear()
	}
	const call = <T>(c: CallBody): Promise<T> => {
		if (failed) return Promise.reject(failed)
		const id = next++
		return new Promise<T>((resolve, reject) => {
			waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
			worker.postMessage({ ...c, id })
		})
	}
	const statements = (tx?: number): Statements => ({
		query: (<T>(text: string, params?: unknown[], opts?: QueryOptions) =>
			// Drizzle passes identity parsers for the types it wants as text: sent as the list of those types.
			call<Results<T>>({ op: 'query', text, params, rowMode: opts?.rowMode, rawTypes: opts?.parsers ? Object.keys(opts.parsers).map(Number) : undefined, tx })) as Statements['query'],
		exec: (async (text: string) => {
			await call({ op: 'exec', text, tx })
			return []
		}) as Statements['exec'],
	})
	await call({ op: 'open', dataDir })
	const client = {
		...statements(),
		async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
			const tx = txs++
			await call({ op: 'begin', tx })
			let result: T
			try {
				result = await fn(statements(tx) as Transaction)
			} catch (e) {
				await call({ op: 'end', tx, commit: false }).catch(() => {})
				throw e
			}
			await call({ op: 'end', tx, commit: true })
			return result
		},
		async close() {
			if (!failed) await call({ op: 'close' }).catch(() => {})
			worker.terminate()
		},
	}
	return client as unknown as PGlite
}
