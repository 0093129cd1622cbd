import { describe, expect, it } from 'bun:test'
import { geminiSchemaToJsonSchema, lowerTypeNames, sanitiseSchema } from '../../../../src/protocols/gemini/schema-sanitise'
import { decodeRequest } from '../../../../src/protocols/gemini/request'

describe('sanitiseSchema', () => {
	it('should drop $schema, additionalProperties and propertyNames (router-for-me/CLIProxyAPI#97)', () => {
		const out = sanitiseSchema({
			$schema: 'http://json-schema.org/draft-07/schema#',
			type: 'object',
			properties: { tags: { type: 'object', additionalProperties: { type: 'string' }, propertyNames: { pattern: '^x' } }, q: { type: 'string' } },
			additionalProperties: false,
			required: ['q'],
		})
		expect(out).toEqual({ type: 'object', properties: { tags: { type: 'object' }, q: { type: 'string' } }, required: ['q'] })
	})

	it('should turn type [X, "null"] into type X with nullable', () => {
		expect(sanitiseSchema({ type: 'object', properties: { a: { type: ['integer', 'null'] } } })).toEqual({
			type: 'object',
			properties: { a: { type: 'integer', nullable: true } },
		})
	})

	it('should turn a multi-type union into anyOf', () => {
		expect(sanitiseSchema({ type: 'object', properties: { a: { type: ['string', 'number'] } } })?.properties).toEqual({
			a: { anyOf: [{ type: 'string' }, { type: 'number' }] },
		})
	})

	it('should collapse anyOf [X, {type: null}] into X nullable (pydantic Optional)', () => {
		const out = sanitiseSchema({
			type: 'object',
			properties: { n: { anyOf: [{ type: 'string', maxLength: 5 }, { type: 'null' }], default: null, title: 'N' } },
		})
		expect(out?.properties).toEqual({ n: { type: 'string', maxLength: 5, nullable: true, default: null, title: 'N' } })
	})

	it('should turn oneOf into anyOf', () => {
		const out = sanitiseSchema({ type: 'object', properties: { v: { oneOf: [{ type: 'string' }, { type: 'integer' }] } } })
		expect(out?.properties).toEqual({ v: { anyOf: [{ type: 'string' }, { type: 'integer' }] } })
	})

	it('should turn a string const into a one-value enum', () => {
		expect(sanitiseSchema({ type: 'object', properties: { kind: { const: 'circle' } } })?.properties).toEqual({
			kind: { enum: ['circle'], type: 'string' },
		})
	})

	it('should stringify integer enums with format enum', () => {
		expect(sanitiseSchema({ type: 'object', properties: { n: { type: 'integer', enum: [1, 2] } } })?.properties).toEqual({
			n: { type: 'integer', enum: ['1', '2'], format: 'enum' },
		})
	})

	it('should inline $ref from $defs and definitions', () => {
		const out = sanitiseSchema({
			type: 'object',
			properties: { home: { $ref: '#/$defs/Address', description: 'Home' }, work: { $ref: '#/definitions/Address' } },
			$defs: { Address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
			definitions: { Address: { type: 'object', properties: { zip: { type: 'string' } } } },
		})
		expect(out).toEqual({
			type: 'object',
			properties: {
				home: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], description: 'Home' },
				work: { type: 'object', properties: { zip: { type: 'string' } } },
			},
		})
	})

	it('should cut recursive $ref cycles instead of looping', () => {
		const out = sanitiseSchema({
			type: 'object',
			properties: { root: { $ref: '#/$defs/Node' } },
			$defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' }, v: { type: 'string' } } } },
		})
		expect(out?.properties).toEqual({
			root: { type: 'object', properties: { child: { type: 'object' }, v: { type: 'string' } } },
		})
	})

	it('should merge allOf', () => {
		const out = sanitiseSchema({
			allOf: [
				{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
				{ properties: { b: { type: 'number' } }, required: ['b'] },
			],
		})
		expect(out).toEqual({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] })
	})

	it('should return undefined for an object without properties, which Gemini rejects', () => {
		expect(sanitiseSchema({ type: 'object', properties: {}, additionalProperties: false })).toBeUndefined()
		expect(sanitiseSchema({})).toBeUndefined()
	})

	it('should give arrays without items a string item schema', () => {
		expect(sanitiseSchema({ type: 'object', properties: { l: { type: 'array' } } })?.properties).toEqual({
			l: { type: 'array', items: { type: 'string' } },
		})
	})

	it('should keep only the formats Gemini supports', () => {
		const out = sanitiseSchema({
			type: 'object',
			properties: { u: { type: 'string', format: 'uri' }, d: { type: 'string', format: 'date-time' }, f: { type: 'number', format: 'double' } },
		})
		expect(out?.properties).toEqual({ u: { type: 'string' }, d: { type: 'string', format: 'date-time' }, f: { type: 'number', format: 'double' } })
	})

	it('should drop required names that are not properties', () => {
		expect(sanitiseSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost'] })?.required).toEqual(['a'])
	})

	it('should drop unsupported keywords such as exclusiveMinimum, examples and $id', () => {
		const out = sanitiseSchema({
			$id: 'x',
			type: 'object',
			properties: { n: { type: 'number', exclusiveMinimum: 0, minimum: 1, examples: [3], multipleOf: 2 } },
		})
		expect(out?.properties).toEqual({ n: { type: 'number', minimum: 1 } })
	})

	it('should not rename user property names that look like keywords', () => {
		const out = sanitiseSchema({ type: 'object', properties: { $schema: { type: 'string' }, additionalProperties: { type: 'boolean' } } })
		expect(Object.keys(out?.properties as object)).toEqual(['$schema', 'additionalProperties'])
	})
})

describe('geminiSchemaToJsonSchema', () => {
	it('should lowercase Gemini SDK types and turn nullable into a null type', () => {
		expect(
			geminiSchemaToJsonSchema({
				type: 'OBJECT',
				properties: { city: { type: 'STRING', nullable: true }, days: { type: 'ARRAY', items: { type: 'INTEGER' } } },
				required: ['city'],
				propertyOrdering: ['city', 'days'],
			}),
		).toEqual({
			type: 'object',
			properties: { city: { type: ['string', 'null'] }, days: { type: 'array', items: { type: 'integer' } } },
			required: ['city'],
		})
	})

	it('should survive a round trip through sanitiseSchema', () => {
		const gem = { type: 'object', properties: { a: { type: 'string', nullable: true, enum: ['x', 'y'] } }, required: ['a'] }
		expect(sanitiseSchema(geminiSchemaToJsonSchema(gem))).toEqual(gem)
	})
})

describe('lowerTypeNames', () => {
	it('should lower Gemini type names in every schema position, and only there', () => {
		const schema = {
			type: 'OBJECT',
			properties: { type: { type: 'STRING', enum: ['OBJECT'] }, list: { type: ['ARRAY', 'NULL'], items: { anyOf: [{ type: 'INTEGER' }, { type: 'boolean' }] } } },
			$defs: { n: { type: 'NUMBER' } },
			required: ['type'],
		}
		expect(lowerTypeNames(schema)).toEqual({
			type: 'object',
			properties: { type: { type: 'string', enum: ['OBJECT'] }, list: { type: ['array', 'null'], items: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] } } },
			$defs: { n: { type: 'number' } },
			required: ['type'],
		})
		const plain = { type: 'object', properties: { a: { type: 'string' } } }
		expect(lowerTypeNames(plain)).toBe(plain)
	})

	it("should lower them in a Gemini client's parametersJsonSchema and responseJsonSchema", () => {
		const req = decodeRequest({
			contents: [{ role: 'user', parts: [{ text: 'q' }] }],
			tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'OBJECT', properties: { a: { type: 'STRING' } } } }] }],
			generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'OBJECT', properties: { n: { type: 'INTEGER' } } } },
		})
		expect(req.tools?.[0]?.parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } } })
		expect(req.responseFormat).toMatchObject({ type: 'json_schema', schema: { type: 'object', properties: { n: { type: 'integer' } } } })
	})
})
