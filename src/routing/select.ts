/**
 * Channel order for one request: lowest priority number first; within a priority, a weighted random order
 * (each pick proportional to weight; weight-0 channels only after the others). Pure given `rand`.
 * @module
 */
import type { Channel } from './catalog'

/**
 * The channels among `channels` that can read what the channel `heldBy` holds (files uploaded through it): that channel
 * itself, else those reaching the vendor as it does, at its address with its key (another channel of the same Google
 * project, serving other models). Empty when none can.
 * @example holdersOf(served, 3, all) → the served channel 3, or the served channels sharing channel 3's address and key
 */
export function holdersOf<C extends Pick<Channel, 'id' | 'type' | 'baseUrl' | 'apiKey'>>(channels: C[], heldBy: number, all: readonly C[]): C[] {
	const on = channels.filter((ch) => ch.id === heldBy)
	if (on.length) return on
	const held = all.find((ch) => ch.id === heldBy)
	return held ? channels.filter((ch) => ch.type === held.type && ch.baseUrl === held.baseUrl && ch.apiKey === held.apiKey) : []
}

/** @example orderChannels([{priority:1,weight:1}, {priority:0,weight:1}]) → the priority-0 channel first */
export function orderChannels<C extends Pick<Channel, 'priority' | 'weight'>>(channels: C[], rand: () => number = Math.random): C[] {
	if (channels.length <= 1) return channels.slice()
	const tiers = new Map<number, C[]>()
	for (const c of channels) {
		const tier = tiers.get(c.priority)
		if (tier) tier.push(c)
		else tiers.set(c.priority, [c])
	}
	const out: C[] = []
	for (const p of [...tiers.keys()].sort((a, b) => a - b)) out.push(...weightedShuffle(tiers.get(p)!, rand))
	return out
}

function weightedShuffle<C extends { weight: number }>(items: C[], rand: () => number): C[] {
	const pool = items.slice()
	const out: C[] = []
	while (pool.length) {
		const total = pool.reduce((s, c) => s + Math.max(0, c.weight), 0)
		let i = 0
		if (total > 0) {
			let r = rand() * total
			for (i = 0; i < pool.length - 1; i++) {
				r -= Math.max(0, pool[i]!.weight)
				if (r < 0) break
			}
		}
		out.push(pool.splice(i, 1)[0]!)
	}
	return out
}
