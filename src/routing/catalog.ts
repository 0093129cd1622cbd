/**
 * The in-memory catalog of enabled channels (with decrypted upstream keys) and model prices, reloaded when the
 * management API changes them (locally at once, other instances through the bus) and every 30 s as a backstop (every
 * 5 s while other instances' changes cannot be heard: no Redis on a shared PostgreSQL, or Redis down).
 * Request handling reads only this; it never queries channels or prices per request.
 *
 * A change must hold on every instance once the management API has answered it: a channel disabled through one
 * instance is not used by the other's very next request. Reloading takes a while (it reads the database and decrypts
 * every channel's key: milliseconds with tens of channels), so `changed` returns once the instances Redis reaches
 * have reloaded (lib/acked-topic.ts, at most ACK_WAIT_MS), and requests reaching an instance while it loads a change
 * wait for it (`settling`, at most CHANGE_WAIT_MS) rather than route on what it replaces.
 * @module
 */
import { and, eq } from 'drizzle-orm'
import type { Price } from '../billing/pricing'
import type { Db } from '../db/client'
import { channels, models } from '../db/schema'
import { type Bus, hearsOthers } from '../lib/bus'
import { ackedTopic } from '../lib/acked-topic'
import { type ModelLimits, modelLimits } from './model-limits'
import type { Cipher } from '../lib/secrets'
import { foundationModelOf, learntVersion } from '../providers/base-models'
import { apiKeySource, type KeySource } from '../providers/channel-key'
import type { ChannelType } from '../providers/channel-types'
import { storedIdentityCheck } from './stored-identity-check'

export type Channel = {
	id: number
	name: string
	type: ChannelType
	baseUrl: string
	apiKey: string
	/** Exact names or globs with `*`. */
	models: string[]
	modelMap: Record<string, string>
	priority: number
	weight: number
	settings: Record<string, unknown>
	/**
	 * The stored (encrypted) form of `apiKey` as this instance loaded it: an upstream 401 disables the channel only
	 * while it still holds that key, not one an administrator gave it since on another instance (routing/attempts.ts).
	 */
	keyEnc?: string
	/**
	 * Where the key came from, for channels stored through the management API (undefined: GATEWAY_CONFIG's or the quick
	 * start's, the operator's): how the key is parsed (channel-key.ts KeySource, google/credentials.ts).
	 */
	keySource?: KeySource
}

export type ModelInfo = Price & { name: string }

/** A stored model row's prices (micro-USD columns), as billing reads them. */
export function storedPrice(r: typeof models.$inferSelect): Price {
	return {
		inputPerMtok: r.inputPerMtok,
		outputPerMtok: r.outputPerMtok,
		cacheReadPerMtok: r.cacheReadPerMtok,
		cacheWritePerMtok: r.cacheWritePerMtok,
		perRequest: r.perRequest,
		maxOutputTokens: r.maxOutputTokens,
		contextWindow: r.contextWindow,
		prices: r.prices ?? {},
	}
}

export type Catalog = {
	/** Enabled channels that serve `model` (after globs), in no particular order. */
	channelsFor(model: string): Channel[]
	price(model: string): ModelInfo | undefined
	/** The model's context window and maximum output: its entry's, else the vendor's documented ones (model-limits.ts). */
	limits(model: string): ModelLimits
	/** Every model name that some channel lists exactly or that has a price and a serving channel. */
	modelNames(): string[]
	/**
	 * Whether `model` exists here although no enabled channel may serve it: it has a price, or a disabled channel
	 * lists it. Such a model is unavailable for now (503), not unknown (404).
	 */
	known(model: string): boolean
	channel(id: number): Channel | undefined
	/** Every enabled channel (Gemini's Files API picks its upload channel among them). */
	channels(): Channel[]
	/**
	 * While a reload for a change heard through the bus runs: a promise the request handlers await before they route
	 * (it never rejects, and gives up after CHANGE_WAIT_MS); undefined otherwise, as nearly always.
	 */
	readonly settling: Promise<void> | undefined
	/** Resolves once the catalog holds what the database held at the call (or later). */
	reload(): Promise<void>
	/** Reload here and tell other instances. */
	changed(): Promise<void>
	stop(): void
}

const globToRegex = (g: string) => new RegExp('^' + g.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$')

/**
 * What no model is named with, though a glob's `*` would match it: a `.` or `..` path segment, `?`, `#`, `%`, a
 * backslash, whitespace or a control character. Such a name put in a vendor's URL (Gemini's `models/{model}:…`)
 * would reach another path or model with the channel's key (`gemini-2.5-flash/../gemini-2.5-pro` under
 * `gemini-2.5-flash*`).
 */
const UNSAFE_NAME = /(^|\/)\.\.?(\/|$)|[?#%\\\s\x00-\x1f\x7f]/

export function matchesModel(patterns: string[], model: string): boolean {
	for (const p of patterns) if (p === model || (p.includes('*') && !UNSAFE_NAME.test(model) && globToRegex(p).test(model))) return true
	return false
}

/**
 * The longest a request waits for a reload a change set off: a database that stopped answering must not stall
 * requests, which are served from memory (catalog and ledger leases) and would otherwise not notice it.
 */
export const CHANGE_WAIT_MS = 1_000

/** The longest `changed` waits for the other instances to say they applied a change. */
export const ACK_WAIT_MS = 2_000

/** Reload this often although every change is heard (a change written to the database by other means). */
const BACKSTOP_MS = 30_000
/**
 * Reload this often while changes made on other instances cannot be heard: two SELECTs and a decrypt per channel,
 * nothing beside a request's cost, and the same bound as a revoked key's (DETACHED_TTL_MS in auth/api-key.ts).
 */
export const DETACHED_RELOAD_MS = 5_000

export type CatalogOptions = {
	/**
	 * Channels whose stored row changed since the last load (edited, enabled again, a config start that altered them):
	 * called as the load that sees the change is applied, on every instance, by however it learnt of the change (the
	 * bus, a resync after an outage, the backstop reload). Not called for the first load.
	 */
	edited?: (ids: number[]) => void
	/** AMBIENT_ENDPOINTS: where a channel stored through the management API may send the host's identity (default none). */
	ambientEndpoints?: readonly string[]
	/**
	 * A channel this instance disabled as it loaded it, with why (stored-identity-check.ts): called once, by the
	 * instance whose write disabled it.
	 */
	refused?: (ch: { id: number; name: string }, reason: string) => void
}

export async function createCatalog(db: Db, cipher: Cipher, bus: Bus, opts: CatalogOptions = {}): Promise<Catalog> {
	let chans: Channel[] = []
	/**
	 * Each channel row's `updated_at` (ms) as last applied, enabled or not: every change to a channel (management API,
	 * config, an upstream 401 disabling it) writes it, so a changed stamp is an edit, however this instance heard of it.
	 */
	let stamps: Map<number, number> | undefined
	/** Disabled channels, only for what they would serve (their keys are not decrypted). */
	let offline: Array<Pick<Channel, 'models' | 'modelMap'>> = []
	let prices = new Map<string, ModelInfo>()
	const byModel = new Map<string, Channel[]>()
	const byModelLimits = new Map<string, ModelLimits>()
	/** The learnt profiles the limits were derived with: a profile whose model Bedrock has since named has other limits. */
	let limitsLearnt = learntVersion()
	let loads = 0
	let latest: Promise<void> | undefined
	let settling: Promise<void> | undefined
	const allow = opts.ambientEndpoints ?? []
	const fromApi = apiKeySource(allow)
	const identityProblem = storedIdentityCheck(allow)

	/** A reload that, when later ones started meanwhile, resolves with the last of them: what it resolves on is current. */
	function reload(): Promise<void> {
		const p = load()
		latest = p
		return current(p)
	}
	const current = (p: Promise<void>): Promise<void> => p.then(() => (latest === p ? undefined : current(latest!)))

	/** A change was made (here or on another instance): reload, and hold requests until it is applied. */
	function heard(): Promise<void> {
		const done = reload()
		const gate: Promise<void> = Promise.race([done.catch(() => {}), Bun.sleep(CHANGE_WAIT_MS)]).then(() => {
			if (settling === gate) settling = undefined
		})
		settling = gate
		return done
	}

	async function load() {
		// Reloads overlap (timer, bus, a local change): only the latest one started may apply what it read, or an
		// older read finishing last would bring back a channel just disabled.
		const mine = ++loads
		const rows = await db.orm.select().from(channels)
		const next: Channel[] = []
		const off: typeof offline = []
		const nextStamps = new Map<number, number>()
		for (const r of rows) {
			nextStamps.set(r.id, r.updatedAt.getTime())
			if (r.status !== 'enabled') {
				off.push({ models: r.models, modelMap: r.modelMap ?? {} })
				continue
			}
			const apiKey = await cipher.decrypt(r.apiKeyEnc)
			const refusal = await identityProblem(r, apiKey)
			if (refusal) {
				off.push({ models: r.models, modelMap: r.modelMap ?? {} })
				await disable(r, refusal, nextStamps)
				continue
			}
			next.push({
				id: r.id,
				name: r.name,
				type: r.type as ChannelType,
				baseUrl: r.baseUrl.replace(/\/+$/, ''),
				apiKey,
				keyEnc: r.apiKeyEnc,
				keySource: r.source === 'api' ? fromApi : undefined,
				models: r.models,
				modelMap: r.modelMap ?? {},
				priority: r.priority,
				weight: r.weight,
				settings: r.settings ?? {},
			})
		}
		const m = new Map<string, ModelInfo>()
		for (const r of await db.orm.select().from(models)) {
			if (r.status !== 'enabled') continue
			m.set(r.name, { name: r.name, ...storedPrice(r) })
		}
		if (mine !== loads) return
		chans = next
		offline = off
		prices = m
		byModel.clear()
		byModelLimits.clear()
		tellOthers()
		const before = stamps
		stamps = nextStamps
		if (!before || !opts.edited) return
		const edited: number[] = []
		for (const [id, at] of nextStamps) if (before.has(id) && before.get(id) !== at) edited.push(id)
		if (edited.length) opts.edited(edited)
	}

	/**
	 * Stores the channel as disabled with why, unless it changed since it was read (another instance disabled it first,
	 * or an administrator gave it another key); its new stamp is no edit of this load's.
	 */
	async function disable(r: typeof channels.$inferSelect, reason: string, nextStamps: Map<number, number>) {
		const [hit] = await db.orm
			.update(channels)
			.set({ status: 'disabled', disabledReason: reason, updatedAt: new Date() })
			.where(and(eq(channels.id, r.id), eq(channels.status, 'enabled'), eq(channels.apiKeyEnc, r.apiKeyEnc)))
			.returning({ updatedAt: channels.updatedAt })
		if (!hit) return
		nextStamps.set(r.id, hit.updatedAt.getTime())
		opts.refused?.({ id: r.id, name: r.name }, reason)
		untold = true
	}
	/** A channel disabled here that the other instances (an older version among them) have not heard of yet. */
	let untold = false
	let changes: ReturnType<typeof ackedTopic> | undefined
	const tellOthers = () => {
		if (!untold || !changes) return
		untold = false
		void changes.publish('').catch(() => {})
	}

	await reload()
	// Resync: a change published while the bus was down never arrives, so reload rather than wait for the backstop.
	changes = ackedTopic(bus, 'catalog-changed', heard, () => void heard().catch(() => {}), ACK_WAIT_MS)
	tellOthers()
	/**
	 * Whether a change made on another instance reaches this one at once, as in the key cache (auth/api-key.ts): through
	 * Redis or PostgreSQL LISTEN while subscribed; an in-process bus hears only this process, which on PGlite is every
	 * instance there is.
	 */
	const hears = hearsOthers(bus, db.kind)
	let lastBackstop = Date.now()
	const timer = setInterval(() => {
		// Deaf to the others (the bus down, or a PostgreSQL shared with no bus): their changes hold here within
		// DETACHED_RELOAD_MS, as their key revocations do, rather than at the next backstop.
		if (hears() && Date.now() - lastBackstop < BACKSTOP_MS) return
		lastBackstop = Date.now()
		void reload().catch(() => {})
	}, DETACHED_RELOAD_MS)
	timer.unref?.()

	const channelsFor = (model: string) => {
		let hit = byModel.get(model)
		if (!hit) {
			hit = chans.filter((c) => Object.hasOwn(c.modelMap, model) || matchesModel(c.models, model))
			if (byModel.size > 10_000) byModel.clear()
			byModel.set(model, hit)
		}
		return hit
	}

	return {
		channelsFor,
		price: (model) => prices.get(model),
		limits(model) {
			if (limitsLearnt !== learntVersion()) {
				limitsLearnt = learntVersion()
				byModelLimits.clear()
			}
			let hit = byModelLimits.get(model)
			if (!hit) {
				// A Bedrock application inference profile's ARN names no model: the one its channel's base_models says, or Bedrock did.
				const upstream = channelsFor(model).flatMap((c) => (Object.hasOwn(c.modelMap, model) ? [foundationModelOf(c, c.modelMap[model]!)] : []))
				hit = modelLimits(model, prices.get(model), upstream)
				if (byModelLimits.size > 10_000) byModelLimits.clear()
				byModelLimits.set(model, hit)
			}
			return hit
		},
		modelNames() {
			const names = new Set<string>()
			for (const c of chans) for (const p of c.models) if (!p.includes('*')) names.add(p)
			for (const n of prices.keys()) if (chans.some((c) => matchesModel(c.models, n))) names.add(n)
			for (const c of chans) for (const k of Object.keys(c.modelMap)) names.add(k)
			return [...names].sort()
		},
		known: (model) => prices.has(model) || offline.some((c) => Object.hasOwn(c.modelMap, model) || matchesModel(c.models, model)),
		channel: (id) => chans.find((c) => c.id === id),
		channels: () => chans,
		get settling() {
			return settling
		},
		reload,
		changed: () => changes!.publish(''),
		stop: () => clearInterval(timer),
	}
}
