import { describe, expect, it } from 'bun:test'
import { ApiError } from '../../../src/console/api'
import { type PriceForm, priceBody, priceError } from '../../../src/console/lib/price-form'

const form = (f: Partial<PriceForm> = {}): PriceForm => ({ name: 'm', input: '1', output: '2', cacheRead: '', cacheWrite: '', perRequest: '', maxOut: '', context: '', units: '', ...f })

describe('price dialog body', () => {
	it('should leave empty fields out when adding a price', () => {
		expect(priceBody(form({ units: 'per_image = 0.04' }))).toEqual({ name: 'm', input_per_mtok: 1, output_per_mtok: 2, per_image: 0.04 })
	})

	it('should refuse to add a model with no price, but take 0 or a unit price alone', () => {
		expect(() => priceBody(form({ input: '', output: '', maxOut: '100' }))).toThrow('Enter a price: Input (USD / 1M tokens) and Output (USD / 1M tokens) (0 for a model served free)')
		expect(priceBody(form({ input: '0', output: '' }))).toEqual({ name: 'm', input_per_mtok: 0 })
		expect(priceBody(form({ input: '', output: '', units: 'per_image = 0.04' }))).toEqual({ name: 'm', per_image: 0.04 })
	})

	it('should send null for emptied fields and removed unit-price lines when editing, so the stored prices go', () => {
		const body = priceBody(form({ input: '', units: '\nper_image = 0.05' }), { prices: { per_image: 0.04, per_image_hd: 0.06, per_legacy: 1 } })
		expect(body).toEqual({
			name: 'm',
			input_per_mtok: null,
			output_per_mtok: 2,
			cache_read_per_mtok: null,
			cache_write_per_mtok: null,
			per_request: null,
			max_output_tokens: null,
			context_window: null,
			per_image: 0.05,
			per_image_hd: null,
		})
	})

	it('should name the field or unit-price line of an amount it cannot read', () => {
		expect(() => priceBody(form({ output: 'abc' }))).toThrow('Output (USD / 1M tokens): enter an amount in USD')
		expect(() => priceBody(form({ units: 'per_image = 0.04\n\nper_image_hd = abc' }))).toThrow('Unit prices, line 3: enter an amount in USD')
		expect(() => priceBody(form({ maxOut: '1.5' }))).toThrow('Max output tokens: enter a whole number')
		expect(() => priceBody(form({ context: '0' }))).toThrow('Context window (tokens): enter a whole number')
		expect(priceBody(form({ maxOut: '64000', context: '200000' }))).toMatchObject({ max_output_tokens: 64000, context_window: 200000 })
	})

	it('should refuse an unknown unit-price name, listing the accepted ones', () => {
		expect(() => priceBody(form({ units: 'per_imgae = 0.04' }))).toThrow(/^Unit prices, line 1: "per_imgae" is not a unit price .*Use one of: per_image, per_image_<size>/)
	})
})

describe('price dialog errors', () => {
	it('should lead a refused amount with its label instead of the API field name', () => {
		const e = new ApiError('Input_per_mtok: USD amount out of range: 99999999999', 400, 'invalid_request_error', 'input_per_mtok')
		expect(priceError(e, form())).toBe('Input (USD / 1M tokens): USD amount out of range: 99999999999')
	})

	it('should name the unit-price line the server refused, and list the accepted names for an unknown one', () => {
		const f = form({ units: 'per_image = 0.04\nper_teleport = 1' })
		expect(priceError(new ApiError('Invalid body: "per_teleport" Unexpected property', 400, 'invalid_request_error', 'per_teleport'), f)).toMatch(/^Unit prices, line 2: "per_teleport" is not a unit price .*per_minute/)
		expect(priceError(new ApiError('Per_image: USD amount out of range: 1e12', 400, undefined, 'per_image'), f)).toBe('Unit prices, line 1: USD amount out of range: 1e12')
	})

	it('should keep any other failure as the server said it', () => {
		expect(priceError(new ApiError('A model named "m" exists', 409, undefined, 'name'), form())).toBe('A model named "m" exists')
		expect(priceError(new Error('Cannot reach the server.'), form())).toBe('Cannot reach the server.')
	})
})
