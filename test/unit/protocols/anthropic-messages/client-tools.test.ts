/**
 * Anthropic's client-run tools (client-tools.ts) in the codec: a function of the canonical request for other vendors,
 * the tool as written (and no function beside it) when the request is encoded back to Anthropic, and the fixed name
 * checked as Anthropic checks it.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'

const WEATHER = { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }
const decode = (tools: unknown[]) => anthropicMessages.decodeRequest({ model: 'm', max_tokens: 10, tools, messages: [{ role: 'user', content: 'hi' }] } as never)

describe('Anthropic client-run tools', () => {
	it('should decode each to a function in its place among the tools, and none to a vendor-only part', () => {
		const req = decode([{ type: 'bash_20250124', name: 'bash' }, WEATHER, { type: 'text_editor_20250124', name: 'str_replace_editor' }, { type: 'memory_20250818', name: 'memory' }])
		expect(req.tools!.map((t) => t.name)).toEqual(['bash', 'weather', 'str_replace_editor', 'memory'])
		expect(req.vendorOnly).toBeUndefined()
		// The earlier editor has undo_edit and inserts new_str.
		const editor = req.tools![2]!.parameters as { properties: Record<string, any> }
		expect(editor.properties.command.enum).toEqual(['view', 'create', 'str_replace', 'insert', 'undo_edit'])
		expect(editor.properties.insert_text).toBeUndefined()
	})

	it('should encode them back to Anthropic as written, in their places, without their functions', () => {
		const tools = [{ type: 'bash_20250124', name: 'bash', cache_control: { type: 'ephemeral' } }, WEATHER, { type: 'computer_20251124', name: 'computer', display_width_px: 1024, display_height_px: 768, enable_zoom: true }]
		expect(anthropicMessages.encodeRequest(decode(tools), 'claude-up').tools as unknown[]).toEqual(tools)
	})

	it('should offer zoom only where the computer tool enables it', () => {
		const zoomed = decode([{ type: 'computer_20251124', name: 'computer', display_width_px: 1024, display_height_px: 768, enable_zoom: true }]).tools![0]!
		expect((zoomed.parameters as any).properties.action.enum).toContain('zoom')
		expect((zoomed.parameters as any).properties.region).toBeDefined()
		const plain = decode([{ type: 'computer_20251124', name: 'computer', display_width_px: 1024, display_height_px: 768 }]).tools![0]!
		expect((plain.parameters as any).properties.action.enum).not.toContain('zoom')
	})

	it("should refuse a name other than the tool's fixed one, as Anthropic does", () => {
		let err: unknown
		try {
			decode([{ type: 'text_editor_20250728', name: 'editor' }])
		} catch (e) {
			err = e
		}
		expect(err).toBeInstanceOf(GatewayError)
		expect((err as GatewayError).status).toBe(400)
		expect((err as GatewayError).message).toContain("tools.0.name: Input should be 'str_replace_based_edit_tool'")
	})
})
