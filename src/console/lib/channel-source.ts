/**
 * Where a channel came from, as the channels page and the channel form say it: the operator looks in the file or the
 * variable named, and learns that an edit made here is undone at the next start.
 */
import type { Channel } from '../types'

/** The quick-start variable each type's `env` channel comes from (src/config/config-apply.ts). */
const QUICK_START_VARS: Record<string, string> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY', gemini: 'GEMINI_API_KEY' }

/** The origin of a channel made at start (null for one made here or through the management API). */
export function channelOrigin(c: Pick<Channel, 'source' | 'type'>): { label: string; note: string } | null {
	if (c.source === 'config') return { label: 'from GATEWAY_CONFIG', note: "This channel comes from GATEWAY_CONFIG: the file's values are applied again at the next start." }
	if (c.source !== 'env') return null
	const name = QUICK_START_VARS[c.type] ?? 'a vendor key variable'
	return { label: `from ${name}`, note: `This channel is the quick start's, made from ${name}: its values are applied again at every start while the variable is set.` }
}
