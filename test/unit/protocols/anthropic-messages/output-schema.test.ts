import { describe, expect, it } from 'bun:test'
import { anthropicAdapter } from '../../../../src/providers/anthropic'
import { claudeOutputSchema } from '../../../../src/protocols/anthropic-messages/output-schema'
import type { Channel } from '../../../../src/routing/catalog'

describe('claudeOutputSchema', () => {
	it('should keep what Claude enforces and close every object', () => {
		const schema = {
			type: 'object',
			title: 'T',
			properties: {
				when: { type: 'string', format: 'date-time', description: 'When' },
				kind: { enum: ['a', 'b'] },
				fixed: { const: 3 },
				list: { type: 'array', items: { type: 'object', properties: { x: { type: ['number', 'null'] } }, required: ['x'] }, minItems: 1 },
				either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
				one: { oneOf: [{ type: 'string' }, { type: 'boolean' }] },
				ref: { $ref: '#/$defs/leaf', description: 'dropped beside a $ref' },
			},
			required: ['when'],
			additionalProperties: true,
			$defs: { leaf: { type: 'object', properties: { v: { type: 'string' } } } },
			$schema: 'http://json-schema.org/draft-07/schema#',
		}
		expect(claudeOutputSchema(schema)).toEqual({
			$defs: { leaf: { type: 'object', properties: { v: { type: 'string' } }, additionalProperties: false } },
			type: 'object',
			title: 'T',
			properties: {
				when: { type: 'string', format: 'date-time', description: 'When' },
				kind: { enum: ['a', 'b'] },
				fixed: { const: 3 },
				list: { type: 'array', items: { type: 'object', properties: { x: { type: ['number', 'null'] } }, required: ['x'], additionalProperties: false }, minItems: 1 },
				either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
				one: { anyOf: [{ type: 'string' }, { type: 'boolean' }] },
				ref: { $ref: '#/$defs/leaf' },
			},
			required: ['when'],
			additionalProperties: false,
		})
	})

	it('should move the constraints Claude refuses into the description, after the one there', () => {
		const out = claudeOutputSchema({
			type: 'object',
			properties: {
				n: { type: 'number', minimum: 0, exclusiveMaximum: 1, multipleOf: 0.5, description: 'Ratio' },
				s: { type: 'string', minLength: 2, pattern: '^[a-z]+$', format: 'credit-card' },
				a: { type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 9, uniqueItems: true },
			},
		})!
		const p = out.properties as Record<string, Record<string, unknown>>
		expect(p.n).toEqual({ type: 'number', description: 'Ratio\n\n{minimum: 0, exclusiveMaximum: 1, multipleOf: 0.5}' })
		expect(p.s).toEqual({ type: 'string', description: '{minLength: 2, pattern: "^[a-z]+$", format: "credit-card"}' })
		expect(p.a).toEqual({ type: 'array', items: { type: 'string' }, description: '{minItems: 3, maxItems: 9, uniqueItems: true}' })
	})

	it('should not touch the schema it was given', () => {
		const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } }
		const copy = structuredClone(schema)
		claudeOutputSchema(schema)
		expect(schema).toEqual(copy)
	})

	it('should give up on what the subset cannot express: recursion, an untyped field, a root that is not an object', () => {
		const tree = { type: 'object', properties: { n: { $ref: '#/definitions/n' } }, definitions: { n: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/definitions/n' } } } } } }
		expect(claudeOutputSchema(tree)).toBeUndefined()
		const mutual = { type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } }, b: { type: 'object', properties: { a: { $ref: '#/$defs/a' } } } } }
		expect(claudeOutputSchema(mutual)).toBeUndefined()
		expect(claudeOutputSchema({ type: 'object', properties: { any: {} } })).toBeUndefined()
		expect(claudeOutputSchema({ type: 'array', items: { type: 'string' } })).toBeUndefined()
		// A shared, non-recursive definition is fine.
		const shared = { type: 'object', properties: { a: { $ref: '#/$defs/p' }, b: { $ref: '#/$defs/p' } }, $defs: { p: { type: 'string' } } }
		expect(claudeOutputSchema(shared)).toMatchObject({ properties: { a: { $ref: '#/$defs/p' }, b: { $ref: '#/$defs/p' } } })
	})
})

describe('anthropicAdapter.upstreamOptions', () => {
	const ch = (settings: Record<string, unknown> = {}) => ({ settings }) as unknown as Channel
	const native = (model: string, settings?: Record<string, unknown>) => anthropicAdapter.upstreamOptions!(ch(settings), model).nativeStructuredOutputs
	it('should use structured outputs for Claude 4.5 and later by name, in the names Anthropic, Bedrock and Vertex use', () => {
		for (const m of ['claude-sonnet-4-5', 'claude-opus-4-5-20251101', 'claude-haiku-4-5@20251001', 'anthropic.claude-sonnet-4-6-v1:0', 'claude-opus-4-7', 'claude-sonnet-5'])
			expect([m, native(m)]).toEqual([m, true])
		for (const m of ['claude-sonnet-4-20250514', 'claude-opus-4-1-20250805', 'claude-3-5-haiku-20241022', 'claude-3-7-sonnet-latest', 'glm-4.6', 'deepseek-chat'])
			expect([m, native(m)]).toEqual([m, false])
	})
	it("should follow the channel's structured_outputs setting over the name", () => {
		expect(native('claude-sonnet-4-5', { structured_outputs: 'prompt' })).toBe(false)
		expect(native('kimi-k2', { structured_outputs: 'native' })).toBe(true)
	})
})
