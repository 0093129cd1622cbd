/**
 * The ledger: every charge passes through here, and no request can spend past an account's balance or a key's
 * limit, whatever runs concurrently and on however many instances.
 *
 * Reservations are served from memory. Each instance leases a slice of an account's (and key's) headroom from the
 * database with one atomic update (`sb_lease_take`: the money leaves the balance and enters the key's `reserved`
 * exactly as a reservation would), reserves from that slice, settles into it, and writes the charges and usage rows
 * in batches (`sb_lease_flush`, every `flushMs`). A lease unused for `idleMs` goes back; so do all at shutdown.
 * A lease whose instance died stops being flushed, expires after `ttlSeconds` and is swept back into the balance.
 * Several instances cannot overspend: each spends only what it leased, and leases come out of one row under a lock.
 * When one instance finds the headroom leased away by others, it asks them (bus topic `ledger-reclaim`) to return
 * what they do not use.
 *
 * What the batching costs: a crash loses the usage rows of at most one flush interval (their money goes back to the
 * balance with the lease: never overcharged, possibly undercharged). A lease is used only while the database has
 * confirmed it recently: a failed flush stops all of them until the database answers again, so an outage stops
 * service within about one flush interval (the answers given meanwhile are billed once it is back). A failed flush
 * may have been applied (the connection cut after the commit): batches are numbered and sent again unchanged until
 * confirmed, and the database applies a number once.
 *
 * Invariant, per account: credits = balance + Σ usage cost + Σ lease amounts (after a flush);
 * per key: spent = Σ its usage cost, reserved = Σ its lease amounts.
 * @module
 */
import { keyRefusal } from '../auth/key-refusal'
import { GatewayError } from '../core/errors'
import type { Db } from '../db/client'
import type { Bus } from '../lib/bus'
import { randomString } from '../lib/ids'
import type { Logger } from '../lib/log'
import { type LeaseFlush, type LeaseStore, type TakeResult, type UsageLiterals, createLeaseStore } from './lease-store'
import { UsageColumns } from './usage-columns'
import type { UsageRecord } from './usage-record'

export type HoldOwner = { accountId: number; tokenId: number | null }

export type Hold = {
	readonly requestId: string
	/** Micro-USD reserved. */
	readonly amount: number
	/** Charges min(cost, what the hold and the remaining headroom cover) and records usage; returns the charged amount. */
	settle(cost: number, usage: UsageRecord): Promise<number>
	/** Returns the hold; records usage (cost 0) when given. */
	release(usage?: UsageRecord): Promise<void>
	readonly done: boolean
}

/** One lease as this instance sees it (tests, views). */
export type LeaseView = { id: string; accountId: number; tokenId: number | null; amount: number; inUse: number }

export type Ledger = {
	/**
	 * Reserves up to `want` micro-USD, at least `min`. When the headroom (balance, key limit) is below `want` but at
	 * least `min`, reserves the headroom: the caller lowers the output cap to fit. Throws 402 below `min`.
	 */
	reserve(owner: HoldOwner, requestId: string, want: number, min: number): Promise<Hold>
	/** A hold of `want` when this instance's lease has that much free now (the common case, no await); else undefined. */
	reserveNow(owner: HoldOwner, requestId: string, want: number): Hold | undefined
	/** Writes what was settled so far (charges, usage rows, what is in use). Views call it before they read. */
	flush(): Promise<void>
	/**
	 * Returns every instance's unused lease money for this account (or only this key): after an administrator
	 * changed the key or the account, and when another instance finds the headroom leased away.
	 */
	reclaim(scope: { accountId: number; tokenId?: number }): Promise<void>
	/** Releases leases past their expiry (their instance died); returns how many. */
	sweep(): Promise<number>
	leases(): LeaseView[]
	/** Flushes and returns every lease (shutdown, after requests drained). */
	close(): Promise<void>
	/**
	 * The process is cutting the connections still open at the end of its shutdown grace period (SHUTDOWN_GRACE_MS):
	 * a request that ends as `client_abort` from now on was cut by the gateway, not left by its client, and its row
	 * says `shutdown`. Here because every usage row passes through the ledger, whichever relay ended it.
	 */
	cutForShutdown(): void
}

export type LedgerOptions = {
	/** A lease not flushed for this long is taken for dead and swept. */
	ttlSeconds: number
	/** How often settled usage is written. */
	flushMs?: number
	/**
	 * Written sooner once this many usage rows wait (default 128): under load the database then gets a steady stream
	 * of batches rather than a burst every interval, which on a small machine took CPU from the requests in flight and
	 * showed in their p99. 128 rather than 64 once a row cost the database less (no request-id index): its CPU per
	 * request 10–25% lower, the p99 no higher (bench/README.md, ninth VM).
	 */
	flushRows?: number
	/**
	 * A batch that filled up waits until this long after the previous flush began (default 20 ms): each flush has a
	 * fixed cost (~0.25 ms of database CPU and a round trip's client work), which at tens of thousands of requests a
	 * second in batches of 64 rows cost more than the rows themselves (bench/README.md).
	 */
	flushGapMs?: number
	/** An unused lease goes back after this long. */
	idleMs?: number
	bus?: Bus
	log?: Logger
}

const RECLAIM_TOPIC = 'ledger-reclaim'
/**
 * Waits before trying again after asking other instances to return their leases (only when what they hold unused
 * would make up the difference: a request the account cannot pay for is refused at once). 1.1 s in all: an instance
 * just started, or busy, took longer than the 230 ms this was, and a request was refused 402 with the money there.
 */
const RECLAIM_BACKOFF_MS = [20, 60, 150, 300, 600]
/** The first slice of a lease covers this many reservations of the size asked; each later one doubles. */
const FIRST_SLICE = 16

type Lease = {
	readonly id: string
	readonly owner: HoldOwner
	/** The row exists (a take succeeded). */
	existing: boolean
	/** Money held and not yet charged. */
	amount: number
	/** Reserved by requests in flight. */
	inUse: number
	/** Charged since the last flush. */
	charge: number
	/** Usage rows since the last flush (the key's last_used_at moves). */
	used: boolean
	/** inUse as the database last saw it. */
	written: number
	/** Taken in all, to size the next slice. */
	taken: number
	lastUsed: number
	/** When the database last confirmed the lease (take or flush); 0 after a failed flush. */
	confirmedAt: number
	/** No new reservations: idle, reclaimed, swept or shutting down. */
	retired: boolean
	/** The sweeper released it: its remaining charges come out of the balance. */
	lost: boolean
	growing?: Promise<void>
	/** Reservations waiting for the take under way: the next take sizes itself for them too. */
	waiting: number
}

/** One flush: what it writes, numbered so that sending it again applies it once. */
type Batch = { readonly seq: number; readonly sent: ReadonlyArray<{ l: Lease; f: LeaseFlush }>; readonly usage: UsageLiterals }

/** The options' defaults (also what the server uses when their environment variables are unset). */
export const LEDGER_DEFAULTS = { flushMs: 100, flushRows: 128, flushGapMs: 20, idleMs: 5_000 } as const

export function createLedger(db: Db, opts: LedgerOptions): Ledger {
	const store: LeaseStore = createLeaseStore(db.sql, opts.ttlSeconds)
	const flushMs = opts.flushMs ?? LEDGER_DEFAULTS.flushMs
	const flushRows = opts.flushRows ?? LEDGER_DEFAULTS.flushRows
	const flushGapMs = opts.flushGapMs ?? LEDGER_DEFAULTS.flushGapMs
	const idleMs = opts.idleMs ?? LEDGER_DEFAULTS.idleMs
	const ttlMs = opts.ttlSeconds * 1000
	const instance = randomString(10)
	let generation = 0
	const active = new Map<string, Lease>()
	const retiring = new Set<Lease>()
	let pending = new UsageColumns()
	/** A batch sent and not confirmed (see `send`); its number; how many were built. */
	let unconfirmed: Batch | undefined
	let batches = 0
	let lastFlushAt = Date.now()
	let closed = false
	/** `cutForShutdown` was called. */
	let cutting = false
	/** Flushes and returns run one at a time, in order. */
	let chain: Promise<unknown> = Promise.resolve()
	const serial = <T>(fn: () => Promise<T>): Promise<T> => {
		const p = chain.then(fn)
		chain = p.catch(() => {})
		return p
	}

	const ownerKey = (o: HoldOwner) => `${o.accountId}:${o.tokenId ?? '-'}`
	const leaseFor = (owner: HoldOwner): Lease => {
		const k = ownerKey(owner)
		let l = active.get(k)
		if (!l) {
			l = {
				id: `${instance}:${k}:${++generation}`,
				owner: { accountId: owner.accountId, tokenId: owner.tokenId },
				existing: false,
				amount: 0,
				inUse: 0,
				charge: 0,
				used: false,
				waiting: 0,
				written: 0,
				taken: 0,
				lastUsed: Date.now(),
				confirmedAt: 0,
				retired: false,
				lost: false,
			}
			active.set(k, l)
		}
		return l
	}
	const usable = (l: Lease) => !l.retired && Date.now() - l.confirmedAt < ttlMs / 2
	const free = (l: Lease) => l.amount - l.inUse
	/** The lease covers `want` now, without asking the database. */
	const covers = (l: Lease, want: number) => want === 0 || (usable(l) && free(l) >= want)

	/** No new reservations; kept (in `retiring`) while its row or its charges still need the database. */
	const retire = (l: Lease) => {
		if (l.retired) return
		l.retired = true
		if (active.get(ownerKey(l.owner)) === l) active.delete(ownerKey(l.owner))
		if (l.existing || l.lost || l.inUse > 0) retiring.add(l)
	}

	/**
	 * One take from the database into the lease. Takes of one lease run one after another (the first creates its
	 * row); each slice is at least twice the last, so a busy lease goes to the database less and less often, and
	 * covers the reservations that queued behind the previous take (a burst of a thousand requests then needs two
	 * takes, not seven in a row).
	 */
	const grow = async (l: Lease, need: number, min: number) => {
		while (l.growing) await l.growing
		// The waiters, and the caller of the take before: it resumes after them, so they may have used its share.
		const extra = Math.max(FIRST_SLICE * need, l.taken, need * (l.waiting + 1))
		// What the row will say is in use: holds may settle while the take is under way, and the next flush must
		// then still write theirs.
		const inUse = l.inUse
		const p = store.take({ id: l.id, existing: l.existing, accountId: l.owner.accountId, tokenId: l.owner.tokenId, need, min, extra, inUse })
		const mine = p.then(
			() => undefined,
			() => undefined,
		)
		l.growing = mine
		let r: TakeResult
		try {
			r = await p
		} finally {
			if (l.growing === mine) l.growing = undefined
		}
		if (r.kind === 'taken') {
			l.existing = true
			l.amount += r.amount
			l.taken += r.amount
			l.written = inUse
			l.confirmedAt = Date.now()
			// Retired while this take was under way (idle, reclaim, shutdown): its new row must still go back.
			if (l.retired) retiring.add(l)
		} else if (r.kind === 'lost') {
			l.lost = true
			retire(l)
		}
		return r
	}

	/** A reservation served from a lease. A class: one is made per request, and methods cost nothing per instance. */
	class LeaseHold implements Hold {
		done = false
		private result: Promise<number> | undefined = undefined

		constructor(
			private readonly l: Lease,
			readonly requestId: string,
			readonly amount: number,
		) {
			l.inUse += amount
			l.lastUsed = Date.now()
		}

		settle(cost: number, usage: UsageRecord): Promise<number> {
			if (this.result) return this.result
			this.done = true
			const want = Math.max(0, Math.round(cost))
			// Nearly always the hold covers the cost and the charge is made at once; only a shortfall waits for a take.
			return (this.result = this.short(want) ? this.growThenCharge(want, usage) : Promise.resolve(this.charge(want, usage)))
		}

		release(usage?: UsageRecord): Promise<void> {
			if (this.result) return this.result.then(() => undefined)
			this.done = true
			this.l.inUse -= this.amount
			if (usage) this.record(usage, 0)
			this.result = Promise.resolve(0)
			return Promise.resolve()
		}

		/** More is owed than the hold and its lease's free part cover (and the lease may still grow). */
		private short(want: number): boolean {
			return want > this.amount + free(this.l) && !this.l.retired
		}

		/**
		 * An estimate that fell short: the rest comes from the lease, and from the database when the lease has too
		 * little (never past the balance or the key's limit). The hold stays in use meanwhile, so no other reservation
		 * takes its money while the take is under way.
		 */
		private async growThenCharge(want: number, usage: UsageRecord): Promise<number> {
			const { l, amount } = this
			for (let i = 0; i < 3 && this.short(want); i++) {
				const r = await grow(l, want - amount - free(l), 0).catch(() => undefined)
				if (r?.kind !== 'taken' || r.amount === 0) break
			}
			return this.charge(want, usage)
		}

		/** Takes `want` (or what the lease has, if less) and records the usage row; the hold is done with. */
		private charge(want: number, usage: UsageRecord): number {
			const { l, amount } = this
			l.inUse -= amount
			const charge = Math.min(want, Math.max(0, free(l)))
			l.amount -= charge
			l.charge += charge
			this.record(usage, charge)
			return charge
		}

		private record(usage: UsageRecord, cost: number) {
			this.l.used = true
			if (cutting && usage.endReason === 'client_abort') usage.endReason = 'shutdown'
			if (pending.add(usage, cost, Date.now()) >= flushRows) full()
		}
	}

	/**
	 * Sends one batch. Until the database confirms it, it stays `unconfirmed` and is sent again as it is, under the
	 * same number, before anything newer: a flush whose reply was lost after its commit is then applied once
	 * (sb_lease_flush knows the number), where merging it into the next batch would charge it twice.
	 */
	async function send(b: Batch): Promise<void> {
		unconfirmed = b
		let lost: Set<string>
		try {
			lost = new Set(await store.flush(instance, b.seq, b.sent.map((s) => s.f), b.usage))
		} catch (e) {
			// Stop serving from leases the database no longer confirms.
			for (const l of active.values()) l.confirmedAt = 0
			throw e
		}
		unconfirmed = undefined
		const now = Date.now()
		lastFlushAt = now
		for (const { l, f } of b.sent) {
			l.written = f.inUse
			if (lost.has(l.id)) {
				l.lost = true
				retire(l)
			} else l.confirmedAt = now
		}
	}

	/** Writes charges, usage rows and in-use amounts of every lease, and moves their expiry forward. */
	async function flushNow(): Promise<void> {
		if (unconfirmed) await send(unconfirmed)
		const leases = [...active.values(), ...retiring].filter((l) => (l.existing && !l.lost) || l.charge !== 0)
		const dirty = pending.size > 0 || leases.some((l) => l.charge !== 0 || l.used || l.written !== l.inUse)
		// Nothing to write: still move the leases' expiry forward now and then (the heartbeat that keeps them alive).
		if (!dirty && (!leases.length || Date.now() - lastFlushAt < ttlMs / 4)) return
		const b: Batch = {
			seq: ++batches,
			usage: pending.literals(),
			sent: leases.map((l) => ({ l, f: { id: l.id, accountId: l.owner.accountId, tokenId: l.owner.tokenId, charge: l.charge, inUse: l.inUse, used: l.used } })),
		}
		pending = new UsageColumns()
		// The charges now belong to the batch, whatever becomes of it.
		for (const { l } of b.sent) {
			l.charge = 0
			l.used = false
		}
		await send(b)
	}

	/** Gives back what a retired lease does not use; forgets it once nothing is left in it. */
	async function giveBack(l: Lease) {
		// A hold that settled after the last flush took its snapshot left a charge the database has not seen: the row
		// still holds that money, and giving the row back as it stands would return what was spent (and forget the
		// charge once nothing is kept). Write it first; a hold still in flight may settle during that write too.
		while ((l.charge !== 0 || unconfirmed) && l.existing && !l.lost && retiring.has(l)) await flushNow()
		if (l.lost || !l.existing) {
			if (l.inUse === 0 && l.charge === 0) retiring.delete(l)
			return
		}
		const keep = l.inUse
		// From now on the lease counts only `keep`: a hold that settles past its amount while the rest goes back must
		// not be charged from money the balance is getting back (the row would go below zero, the balance would show
		// spent money as free, and another request could spend it again). The lease does not count it again even when
		// the call fails, since it may have been applied with its reply lost: the row then still holds the money, and
		// the next attempt gives it back.
		l.amount = Math.min(l.amount, keep)
		const given = await store.give(l.id, l.owner.accountId, l.owner.tokenId, keep)
		if (given < 0) {
			// Swept meanwhile: a hold still in flight charges the balance through the next flush.
			l.lost = true
			if (l.inUse === 0 && l.charge === 0) retiring.delete(l)
			return
		}
		// The row now holds `keep`, and so does the lease, less what holds settled meanwhile (charges the next flush
		// writes).
		l.written = keep
		if (keep === 0) {
			l.existing = false
			retiring.delete(l)
		}
	}

	/** The timer's work: flush when there is something to write, retire idle leases, return retired ones. */
	async function maintain() {
		const now = Date.now()
		for (const l of active.values()) if (l.inUse === 0 && now - l.lastUsed > idleMs && !l.growing) retire(l)
		await flushNow()
		for (const l of [...retiring]) if (l.inUse === 0) await giveBack(l)
	}

	const onReclaim = (msg: string) => {
		if (closed) return
		let scope: { accountId?: number; tokenId?: number }
		try {
			scope = JSON.parse(msg)
		} catch {
			return
		}
		void reclaimLocal(scope).catch((e) => opts.log?.warn('lease reclaim failed', { error: String(e) }))
	}
	async function reclaimLocal(scope: { accountId?: number; tokenId?: number }) {
		const hit = [...active.values()].filter((l) => l.owner.accountId === scope.accountId && (scope.tokenId === undefined || l.owner.tokenId === scope.tokenId))
		if (!hit.length) return
		for (const l of hit) retire(l)
		await serial(async () => {
			await flushNow()
			for (const l of hit) await giveBack(l)
		})
	}
	// No resync: a reclaim request is not state that goes stale. One missed while the bus was down failed its request
	// then; the next request that runs short asks again, and an unused lease goes back after idleMs anyway.
	opts.bus?.subscribe(RECLAIM_TOPIC, onReclaim)

	let ticking = false
	let failing = false
	let lastTick = 0
	let soon: ReturnType<typeof setTimeout> | undefined
	/** A batch filled up: it goes now, or once flushGapMs has passed since the last flush began. */
	function full() {
		if (soon || ticking || closed) return
		const wait = lastTick + flushGapMs - Date.now()
		if (wait <= 0) return tick()
		soon = setTimeout(() => {
			soon = undefined
			tick()
		}, wait)
		;(soon as { unref?: () => void }).unref?.()
	}
	/** One maintenance pass, unless one is running (rows that arrive meanwhile go with the next). */
	function tick() {
		if (ticking || closed) return
		ticking = true
		lastTick = Date.now()
		serial(maintain)
			.then(() => {
				if (failing) opts.log?.info('ledger flush works again')
				failing = false
			})
			.catch((e) => {
				// Once per outage, not every tick.
				if (!failing) opts.log?.warn('ledger flush failed; usage is kept in memory and retried', { error: String(e) })
				failing = true
			})
			.finally(() => {
				ticking = false
				// Rows that came in meanwhile: the next batch goes once the gap allows (not during an outage: the timer retries).
				if (!failing && pending.size >= flushRows) full()
			})
	}
	const timer = setInterval(tick, flushMs)
	;(timer as { unref?: () => void }).unref?.()

	/**
	 * Why the database found no owner to lease for, in the words the key cache uses for the same state (auth/key-refusal.ts):
	 * whichever check sees a key disabled on another instance first, the client gets one answer for it.
	 */
	async function ownerRefusal(owner: HoldOwner): Promise<GatewayError> {
		const state = await store.ownerState(owner.accountId, owner.tokenId).catch(() => undefined)
		const why = state === undefined ? undefined : keyRefusal(state, Date.now())
		// Active again by now (changed back meanwhile), or the lookup failed: the lease was refused all the same.
		return why ?? new GatewayError('authentication', 'API key (or its account) is no longer active', { code: 'invalid_api_key' })
	}

	/**
	 * `own` is what this instance's lease holds unused. A key refused for its limit says what is left of it (the room in
	 * the database, this lease's and the other leases' unused money), since the console shows that key as active and
	 * partly spent: "limit reached" alone read as wrong.
	 */
	const refuse = (min: number, r: { balance: number; tokenRoom: number | null; others: number }, own: number) => {
		const room = r.tokenRoom ?? Number.MAX_SAFE_INTEGER
		const needs = `this request needs at least $${(min / 1e6).toFixed(6)}`
		if (room < min && room <= r.balance) {
			const left = Math.max(0, room) + Math.max(0, own) + Math.max(0, r.others)
			return new GatewayError('insufficient_quota', `API key spend limit reached: ${needs}, and $${(left / 1e6).toFixed(6)} of the key's limit is left`, { code: 'insufficient_quota' })
		}
		return new GatewayError('insufficient_quota', `account balance exhausted: ${needs}`, { code: 'insufficient_quota' })
	}

	return {
		async reserve(owner, requestId, wantIn, minIn) {
			if (closed) throw new GatewayError('unavailable', 'Service is shutting down', { code: 'shutting_down' })
			const want = Math.max(0, Math.round(wantIn))
			const min = Math.min(want, Math.max(0, Math.round(minIn)))
			let reclaims = 0
			for (;;) {
				const l = leaseFor(owner)
				if (covers(l, want)) return new LeaseHold(l, requestId, want)
				if (l.growing) {
					l.waiting++
					try {
						await l.growing
					} finally {
						l.waiting--
					}
					continue
				}
				const room = Math.max(0, free(l))
				const r = await grow(l, want - room, Math.max(0, min - room))
				if (r.kind === 'taken') {
					if (free(l) >= want) return new LeaseHold(l, requestId, want)
					if (free(l) >= min && free(l) > 0) return new LeaseHold(l, requestId, free(l))
					continue // others took it meanwhile: ask again
				}
				if (r.kind === 'lost') continue // a fresh lease next time round
				// The database refused the owner: its account is gone or disabled, or its key is no longer active (revoked elsewhere, expired).
				if (r.kind === 'no_account') throw await ownerRefusal(owner)
				// Short: the headroom left is below what this request needs.
				if (!l.retired && free(l) >= min && free(l) > 0) return new LeaseHold(l, requestId, free(l))
				// Other leases hold enough unused money (as of their last flush) to make up the difference: ask for it.
				const headroom = Math.max(0, Math.min(r.balance, r.tokenRoom ?? r.balance))
				if (r.others > 0 && r.others + headroom >= min - Math.max(0, free(l)) && reclaims < RECLAIM_BACKOFF_MS.length && opts.bus) {
					const tokenBound = r.tokenRoom !== null && r.tokenRoom < r.balance
					opts.bus.publish(RECLAIM_TOPIC, JSON.stringify(tokenBound && owner.tokenId !== null ? { accountId: owner.accountId, tokenId: owner.tokenId } : { accountId: owner.accountId }))
					await Bun.sleep(RECLAIM_BACKOFF_MS[reclaims++]!)
					continue
				}
				throw refuse(min, r, free(l))
			}
		},

		reserveNow(owner, requestId, wantIn) {
			if (closed) return undefined
			const want = Math.max(0, Math.round(wantIn))
			const l = leaseFor(owner)
			return covers(l, want) ? new LeaseHold(l, requestId, want) : undefined
		},

		flush: () => serial(flushNow),

		async reclaim(scope) {
			await reclaimLocal(scope)
			opts.bus?.publish(RECLAIM_TOPIC, JSON.stringify(scope))
		},

		sweep: () => store.sweep(),

		leases: () =>
			[...active.values(), ...retiring].map((l) => ({ id: l.id, accountId: l.owner.accountId, tokenId: l.owner.tokenId, amount: l.amount, inUse: l.inUse })),

		cutForShutdown() {
			cutting = true
		},

		async close() {
			if (closed) return
			closed = true
			clearInterval(timer)
			clearTimeout(soon)
			// Requests cut at shutdown settle as they unwind: give them a moment, so their leases go back whole.
			for (let waited = 0; waited < 2_000 && [...active.values(), ...retiring].some((l) => l.inUse > 0); waited += 10) await Bun.sleep(10)
			for (const l of [...active.values()]) retire(l)
			await serial(async () => {
				await flushNow()
				for (const l of [...retiring]) await giveBack(l)
			})
		},
	}
}
