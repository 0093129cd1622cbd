import { describe, expect, it } from 'bun:test'
import { dropAttributionLine } from '../../../src/providers/attribution-line'

const LINE = 'x-anthropic-billing-header: cc_version=2.1.197.a5a; cc_entrypoint=sdk-cli;'

describe('dropAttributionLine (Bedrock refuses it as a reserved keyword)', () => {
	it('should drop a block that is only the line, and keep the others as they are', () => {
		const body: Record<string, unknown> = { system: [{ type: 'text', text: LINE }, { type: 'text', text: 'you code', cache_control: { type: 'ephemeral' } }] }
		expect(dropAttributionLine(body)).toBe(true)
		expect(body.system).toEqual([{ type: 'text', text: 'you code', cache_control: { type: 'ephemeral' } }])
	})

	it('should keep the rest of a block or string that holds more than the line', () => {
		const blocks: Record<string, unknown> = { system: [{ type: 'text', text: `${LINE}\nyou code` }] }
		expect(dropAttributionLine(blocks)).toBe(true)
		expect(blocks.system).toEqual([{ type: 'text', text: 'you code' }])
		const plain: Record<string, unknown> = { system: `${LINE}\nyou code` }
		expect(dropAttributionLine(plain)).toBe(true)
		expect(plain.system).toBe('you code')
	})

	it('should leave out a system prompt that was only the line, and leave alone one without it', () => {
		const only: Record<string, unknown> = { system: [{ type: 'text', text: LINE }] }
		expect(dropAttributionLine(only)).toBe(true)
		expect('system' in only).toBe(false)
		const other: Record<string, unknown> = { system: 'quoting x-anthropic-billing-header: mid-line stays' }
		expect(dropAttributionLine(other)).toBe(false)
		expect(other.system).toBe('quoting x-anthropic-billing-header: mid-line stays')
	})
})
