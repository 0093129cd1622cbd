/**
 * The embedded database's own thread: PGlite (PostgreSQL compiled to WebAssembly) runs here, and the gateway talks to
 * it through messages (src/db/pglite-remote.ts). Why a thread: PGlite's ~270 MB of WebAssembly memory, counted in the
 * heap it lives in, made the collector of the gateway's heap let garbage pile up to twice that before collecting
 * (RSS peaks of 500–770 MB under load, against ~140 MB on PostgreSQL), and its queries ran on the thread that serves
 * requests. In a worker the memory is counted in a heap that allocates little, and queries run beside the requests.
 * @module
 */
import type { PGlite, Results } from '@electric-sql/pglite'
import { createPglite } from './pglite-open'
import { type Call, type Reply, serialiseError } from './pglite-protocol'

declare const self: Worker

let db: PGlite | undefined
/** Open transactions: how to run a statement in each, how to end it, and its outcome. */
const txs = new Map<number, { run(c: Call): Promise<Results | undefined>; end(commit: boolean): void; done: Promise<void> }>()

const identity = (v: string) => v

/**
 * How often a thread that ran statements collects its garbage (ms). PGlite's file writes leave garbage outside this
 * heap (buffers), and the collector paces itself by the heap's size, which counts PGlite's ~280 MB of WebAssembly
 * memory: left alone, it let that garbage grow by about as much again under a steady write load (the gateway's RSS
 * 200 → 360–620 MB in the bench; 253 MB with this). A full collection here takes ~8 ms (16 on a busy machine), so at
 * most ~1–2% of one CPU while the database is written to, and nothing while it is idle.
 */
const COLLECT_MS = 1000
let ran = false
const collector = setInterval(() => {
	if (!ran) return
	ran = false
	Bun.gc(true)
}, COLLECT_MS)
;(collector as { unref?: () => void }).unref?.()

async function query(on: Pick<PGlite, 'query' | 'exec'>, c: Call): Promise<Results | undefined> {
	if (c.op === 'exec') {
		await on.exec(c.text)
		return undefined
	}
	if (c.op !== 'query') throw new Error(`not a statement: ${c.op}`)
	// Parsers are functions and cannot be sent: the caller names the types to leave as text (Drizzle's date types).
	const parsers = c.rawTypes?.length ? Object.fromEntries(c.rawTypes.map((t) => [t, identity])) : undefined
	return on.query(c.text, c.params, { rowMode: c.rowMode, parsers })
}

/** Opens a transaction that stays open, holding PGlite's lock, until an `end` message for it. */
function begin(id: number): Promise<void> {
	return new Promise((opened, failed) => {
		let run!: (c: Call) => Promise<Results | undefined>
		let finish!: (commit: boolean) => void
		const ended = new Promise<boolean>((r) => (finish = r))
		const done = db!.transaction(async (tx) => {
			run = (c) => query(tx, c)
			opened()
			if (!(await ended)) await tx.rollback()
		})
		// A failed BEGIN fails the `begin` call; a failed COMMIT the `end` call.
		done.catch(failed)
		txs.set(id, { run: (c) => run(c), end: finish, done })
	})
}

async function handle(c: Call): Promise<unknown> {
	switch (c.op) {
		case 'open':
			db = await createPglite(c.dataDir)
			// A fresh data directory leaves initdb's instance (~900 MB) as garbage, and this heap allocates too little
			// for its collector to come by on its own.
			setTimeout(() => Bun.gc(true), 100)
			return undefined
		case 'query':
		case 'exec': {
			const on = c.tx !== undefined ? txs.get(c.tx) : undefined
			if (c.tx !== undefined && !on) throw new Error('transaction is over')
			const r = on ? await on.run(c) : await query(db!, c)
			return r && { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows }
		}
		case 'begin':
			return begin(c.tx)
		case 'end': {
			const t = txs.get(c.tx)
			if (!t) return undefined
			txs.delete(c.tx)
			t.end(c.commit)
			await t.done
			return undefined
		}
		case 'close':
			await db?.close()
			return undefined
	}
}

self.onmessage = async (e: MessageEvent<Call>) => {
	const c = e.data
	ran = true
	let reply: Reply
	try {
		reply = { id: c.id, ok: await handle(c) }
	} catch (err) {
		reply = { id: c.id, error: serialiseError(err) }
	}
	self.postMessage(reply)
}
