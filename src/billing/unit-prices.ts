/**
 * The unit prices (`per_*`, beside the token prices and `per_request`) and the prices of token kinds billed apart
 * (`audio_input_per_mtok` …, billing/pricing.ts) a model may list: exactly the names some code charges. The config
 * file check and the management API both accept only these, because a name nothing reads would bill that unit at $0
 * without a word.
 * @module
 */
import { TOKEN_PRICES, US_INFERENCE_MULTIPLIER, WEB_SEARCH_PRICE } from './pricing'

/** `WxH` in pixels, as passthrough/validate.ts `checkSize` accepts for images and videos. */
const SIZE = '\\d{1,5}x\\d{1,5}'
/** The image qualities of modules/images/model.ts; `auto` is never looked up (passthrough/pricing.ts). */
const QUALITIES = ['standard', 'hd', 'low', 'medium', 'high']
const QUALITY = `(?:${QUALITIES.join('|')})`

/** [name as shown in messages, regex source]. A change here needs a consumer that charges the unit. */
const UNITS: ReadonlyArray<readonly [string, string]> = [
	// Images: passthrough/pricing.ts `imageUnitPrice` (modules/images).
	['per_image', 'per_image'],
	['per_image_<size>', `per_image_${SIZE}`],
	['per_image_<quality>', `per_image_${QUALITY}`],
	['per_image_<size>_<quality>', `per_image_${SIZE}_${QUALITY}`],
	// Transcriptions: passthrough/pricing.ts `durationCost`/`pricedByDuration` (modules/audio/transcriptions.ts);
	// per_second also prices videos.
	['per_minute', 'per_minute'],
	['per_second', 'per_second'],
	// Videos: modules/video `videoCost`, before per_second.
	['per_second_<size>', `per_second_${SIZE}`],
	// Speech: passthrough/pricing.ts `charCost` (modules/audio/speech.ts).
	['per_mchar', 'per_mchar'],
	['per_char', 'per_char'],
	// Rerank: Cohere search units (modules/rerank).
	['per_search_unit', 'per_search_unit'],
	// Server-side web searches the vendor reports (Anthropic `server_tool_use.web_search_requests`): billing/pricing.ts `tokenCost`.
	[WEB_SEARCH_PRICE, WEB_SEARCH_PRICE],
	// Token kinds priced apart, per million tokens: billing/pricing.ts `ratesFor` (TOKEN_PRICES).
	...Object.values(TOKEN_PRICES).map((n) => [n, n] as const),
	// Not a price but a factor on every token price (1.1, not dollars): billing/pricing.ts `tokenCost`.
	[US_INFERENCE_MULTIPLIER, US_INFERENCE_MULTIPLIER],
]

/** Anchored regex source matching every accepted unit price name (a JSON Schema `patternProperties` key). */
export const UNIT_PRICE_PATTERN = `^(?:${UNITS.map(([, p]) => p).join('|')})$`

const unitPrice = new RegExp(UNIT_PRICE_PATTERN)

/** @example isUnitPrice('per_image_1024x1024_hd') === true; isUnitPrice('per_reqest') === false */
export const isUnitPrice = (key: string): boolean => unitPrice.test(key)

/** The accepted names, for error messages and the OpenAPI description. */
export const UNIT_PRICE_NAMES = `${UNITS.map(([n]) => n).join(', ')} (<size> is WxH, <quality> one of ${QUALITIES.join(', ')})`

/** A model entry's own prices beside the unit prices (config/gateway-file.ts `ModelFields`). */
const BASE_PRICES = new Set(['input_per_mtok', 'output_per_mtok', 'cache_read_per_mtok', 'cache_write_per_mtok', 'per_request'])

/**
 * Whether a model entry names a price: an entry naming none would be served at $0 without anyone having said so, so
 * the management API and the console ask for one (0 still prices a model free, on purpose). The US factor is no price.
 * @example namesPrice({ name: 'm', max_output_tokens: 100 }) === false; namesPrice({ name: 'm', per_image: 0.04 }) === true
 */
export const namesPrice = (entry: Record<string, unknown>): boolean =>
	Object.entries(entry).some(([k, v]) => v !== undefined && v !== null && (BASE_PRICES.has(k) || (isUnitPrice(k) && k !== US_INFERENCE_MULTIPLIER)))

/** Why an entry naming no price is refused (`input_per_mtok` leads, as the field a 400 names). */
export const NO_PRICE_MESSAGE = 'input_per_mtok: no price given: give input_per_mtok and output_per_mtok (0 serves the model free), or another price (cache_read_per_mtok, cache_write_per_mtok, per_request, a unit price)'
