/**
 * Every key README "Configuration" documents for GATEWAY_CONFIG is one the file's schema takes, and every key the
 * schema takes is documented: a strict schema must not refuse a documented key, nor accept one nobody can learn of.
 */
import { describe, expect, it } from 'bun:test'
import { ChannelEntry, ModelEntry, parseGatewayConfig } from '../../../src/config/gateway-file'
import { ChannelSettings, ChannelTimeouts } from '../../../src/config/channel-settings'
import { schemaKeys } from '../../../src/config/nearest-key'

const readme = await Bun.file(`${import.meta.dir}/../../../README.md`).text()
const section = readme.slice(readme.indexOf('\n## Configuration'), readme.indexOf('\n## ', readme.indexOf('\n## Configuration') + 1))
const ticked = (text: string) => [...text.matchAll(/`([a-z0-9_<>]+)`/g)].map((m) => m[1]!)
/** The README's example file, its settings example and its list of prices. */
const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as { channels: Record<string, unknown>[]; models: Record<string, unknown>[] }
const settings = JSON.parse(/`(\{"timeouts".*?\})`/.exec(section)![1]!) as Record<string, unknown>
const pricesText = section.slice(section.indexOf('- Prices are USD'), section.indexOf("- A model's limits"))
const priceNames = ticked(pricesText).filter((k) => /_per_mtok$|^per_/.test(k))
/** A documented name with a placeholder, as a file would write it. */
const concrete = (k: string) => k.replace('<size>', '1024x1024').replace('<quality>', 'hd')

describe('the keys README documents for GATEWAY_CONFIG', () => {
	it('should all be taken, together, in one file', () => {
		expect(priceNames.length).toBeGreaterThan(20)
		const model = { name: 'every-price', ...Object.fromEntries(priceNames.map((k) => [concrete(k), 0.5])), max_output_tokens: 1000, context_window: 2000, enabled: true }
		const channel = { ...example.channels[0]!, settings, enabled: true }
		const cfg = parseGatewayConfig({ channels: [channel, ...example.channels.slice(1)], models: [...example.models, model] }, 'README')
		expect(cfg.models.at(-1)).toEqual(model as never)
		expect(cfg.channels[0]!.settings).toEqual(settings)
	})

	it('should be every key the schema takes', () => {
		const documented = new Set([...ticked(section), ...Object.keys(example), ...Object.keys(settings), ...Object.keys(settings.timeouts as object), ...example.channels.flatMap(Object.keys), ...example.models.flatMap(Object.keys)])
		const taken = [...schemaKeys(ChannelEntry), ...schemaKeys(ChannelSettings), ...schemaKeys(ChannelTimeouts), ...schemaKeys(ModelEntry), 'channels', 'models']
		expect(taken.filter((k) => !documented.has(k))).toEqual([])
	})
})
