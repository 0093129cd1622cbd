import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { countTokens, rankOfBytes } from '../../../src/relay/o200k'

/**
 * The oracle: gpt-tokenizer, with special tokens counted as ordinary text (its default countTokens throws on
 * `<|endoftext|>` and the like; ours counts them as text). Loaded here only, never by the gateway.
 */
const gpt = require('gpt-tokenizer') as { countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number }
const asText = { disallowedSpecial: new Set<string>() }
const oracle = (text: string) => gpt.countTokens(text, asText)

/** Texts whose counts differ, with both counts (empty when all agree: one message instead of hundreds). */
const mismatches = (texts: string[]) =>
	texts.flatMap((text) => {
		const ours = countTokens(text)
		const theirs = oracle(text)
		return ours === theirs ? [] : [{ text: text.length > 200 ? `${text.slice(0, 200)}…` : text, ours, theirs }]
	})

/** Deterministic PRNG (mulberry32), so the random corpus is the same on every run. */
const prng = (seed: number) => () => {
	seed = (seed + 0x6d2b79f5) | 0
	let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** `count` strings of characters drawn from `alphabet`, the i-th `length(i)` long. */
function randomTexts(random: () => number, alphabet: string, count: number, length: (i: number) => number): string[] {
	const texts: string[] = []
	for (let i = 0; i < count; i++) {
		const n = length(i)
		let s = ''
		for (let j = 0; j < n; j++) s += alphabet[Math.floor(random() * alphabet.length)]
		texts.push(s)
	}
	return texts
}

describe('countTokens (o200k_base)', () => {
	it('should count the documented examples', () => {
		expect(countTokens('')).toBe(0)
		expect(countTokens('hello world')).toBe(2)
		expect(countTokens('a'.repeat(5000))).toBe(oracle('a'.repeat(5000)))
	})

	it('should agree with gpt-tokenizer on a varied corpus', () => {
		const corpus = [
			'',
			' ',
			'a',
			'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!',
			'It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness…',
			"DON'T we'll I'M you'RE they've She'd IT'S can't WON'T y'all 'tis rock'n'roll o'clock ''quoted'' 'LL 'Ve",
			"don't DON'T Don'T we'll WE'LL We'Ll I've I'VE it's IT'S they're THEY'RE I'd I'D I'm I'M",
			'interface Foo<T> {\n\treadonly bar: Map<string, T[]>\n\tbaz?(x: number): Promise<void>\n}\nconst x = (a: number) => a ** 2 // square\n',
			'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n',
			'{"model":"gpt-4o","messages":[{"role":"user","content":"Hi!\\nHow are you?"}],"temperature":0.7,"max_tokens":1024,"stream":true}',
			'   leading and trailing spaces   ',
			'\t\ttabs\tand\u000bvertical\ftabs\t',
			'line one\nline two\r\nline three\rline four\n\n\n\nafter blanks\n   \n\t\n',
			'trailing newline run \n \n \n',
			'12345678901234567890 3.14159 1,000,000 0xDEADBEEF 1e-10 -42 +7 2024-01-31T12:00:00Z',
			'!!!??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} <<< >>> ||| \\\\ /// ~~~ ``` ;;; :::',
			'a/b/c\n/// comment\n//\n',
			'日本語のテキストを数える。東京は日本の首都です。',
			'中文文本：我们今天去公园散步，天气很好。',
			'한국어 텍스트입니다. 안녕하세요!',
			'مرحبا بالعالم! هذا نص عربي للاختبار. ١٢٣٤٥',
			'שלום עולם, זה טקסט בעברית.',
			'Привет, мир! Это тест. ЁЖИК ёжик',
			'Ελληνικά: Καλημέρα κόσμε ΑΒΓΔ',
			'नमस्ते दुनिया, यह हिंदी पाठ है।',
			'สวัสดีชาวโลก นี่คือข้อความภาษาไทย',
			'😀😃😄 👍🏽👍🏿 👨‍👩‍👧‍👦 🏳️‍🌈 🇺🇸🇯🇵 ❤️ ✊🏾 🧑‍💻',
			'e\u0301 a\u0300\u0323 n\u0303 Z\u0351\u0352\u0353\u0354 combining: o\u0308\u0304',
			'mixed: Café naïve résumé Straße Ĳssel ǅemal ſtraße K (Kelvin) ﬁ ligature ﬃ',
			'English 日本語 العربية русский 123 한국어 emoji 🎉 mixed',
			'nbsp\u00a0here\u2003em\u2009thin\u3000ideographic\u200bzero width\u2028line\u2029para\u0085nel',
			'fullwidth １２３４ ＡＢＣ ａｂｃ and digits ٠١٢ ०१२ ๑๒๓',
			'<|endoftext|> <|fim_prefix|> <|fim_middle|> <|fim_suffix|> <|im_start|>user<|im_sep|>hi<|im_end|> <|endofprompt|>',
			'\u0000\u0001\u0002\u001f\u007f control chars',
			'lone surrogates: \ud800 \udfff x\ud83dy \ude00\ud83d',
			' '.repeat(3000),
			'\n'.repeat(1000),
			' \n'.repeat(500),
			'ab'.repeat(2000),
			'é'.repeat(2000),
			'日本'.repeat(600),
			'🎉'.repeat(500),
			'x'.repeat(300) + 'Y'.repeat(300) + 'z'.repeat(300),
			'.'.repeat(2000),
			'1'.repeat(1000),
		]
		expect(mismatches(corpus)).toEqual([])
	})

	it('should agree on long pieces (merged with a heap beyond 128 bytes) and short ones (merged by scanning)', () => {
		const random = prng(7)
		const texts = randomTexts(random, 'abcdefghijklmnopqrstuvwxyzéüñøå', 60, (i) => 1 + Math.floor(random() * (i < 30 ? 140 : 2000)))
		expect(mismatches(texts)).toEqual([])
	})

	it('should find every token of the rank file under its own rank (no two tokens share both hashes)', () => {
		const file = readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'), 'utf8')
		const lines = file.split('\n').filter(Boolean)
		expect(lines.length).toBe(199_998)
		const wrong: string[] = []
		for (const line of lines) {
			const [b64, rank] = line.split(' ')
			if (rankOfBytes(Buffer.from(b64!, 'base64')) !== Number(rank)) wrong.push(line)
		}
		expect(wrong).toEqual([])
	})

	it('should find no token in byte sequences that are none (a hash match alone is no match)', () => {
		const file = readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'), 'utf8')
		const tokens = new Set(file.split('\n').map((l) => l.split(' ')[0]))
		const random = prng(2024)
		// A million lookups that miss: with the slot's 14-bit tag alone as the check, ~600 would pass for tokens.
		let misses = 0
		const found: string[] = []
		const bytes = new Uint8Array(12)
		while (misses < 1_000_000) {
			const n = 2 + Math.floor(random() * 10)
			for (let i = 0; i < n; i++) bytes[i] = Math.floor(random() * 256)
			const piece = bytes.subarray(0, n)
			const b64 = Buffer.from(piece).toString('base64')
			if (tokens.has(b64)) continue
			misses++
			if (rankOfBytes(piece) !== undefined) found.push(b64)
		}
		expect(found).toEqual([])
	})

	it('should not mistake one merged piece for a similar one (the merge cache checks a second hash)', () => {
		const random = prng(99)
		const texts: string[] = []
		// Families of rare words that differ in the last letter only, or are prefixes of one another: with 2,048 cache
		// slots, many of them share a slot with a sibling.
		for (let i = 0; i < 300; i++) {
			let stem = ''
			for (let j = 0; j < 7; j++) stem += 'bcdfghjklmnpqrstvwxzaeiouy'[Math.floor(random() * 26)]
			for (let c = 0x61; c <= 0x7a; c++) texts.push(stem + String.fromCharCode(c))
			for (let n = 2; n < stem.length; n++) texts.push(stem.slice(0, n))
		}
		expect(mismatches(texts)).toEqual([])
	})

	it('should agree on random ASCII (the scanner that stands in for the regex on ASCII)', () => {
		const random = prng(42)
		// Few distinct characters, so runs, contractions and whitespace-before-newline cases come up often.
		const alphabet = "aAbZsStTlLvVeErRmMdD'''   \t\n\n\r/.,!-_0123456789\u000b\f\u0000\u007f\"#({"
		expect(mismatches(randomTexts(random, alphabet, 400, () => Math.floor(random() * 80)))).toEqual([])
	})

	it('should agree on random Unicode (seeded)', () => {
		const random = prng(2024)
		// [first, last] code point ranges, ASCII listed several times so it dominates as in real text.
		const ranges: [number, number][] = [
			[0x20, 0x7e],
			[0x20, 0x7e],
			[0x41, 0x5a],
			[0x61, 0x7a],
			[0x09, 0x0d],
			[0x27, 0x27],
			[0xa0, 0x24f], // Latin-1, Latin Extended
			[0x300, 0x36f], // combining marks
			[0x370, 0x3ff], // Greek
			[0x400, 0x4ff], // Cyrillic
			[0x590, 0x5ff], // Hebrew
			[0x600, 0x6ff], // Arabic
			[0x900, 0x97f], // Devanagari
			[0xe00, 0xe7f], // Thai
			[0x1e00, 0x1eff], // Latin Extended Additional
			[0x2000, 0x206f], // general punctuation, spaces, ZWJ
			[0x20a0, 0x20cf], // currency
			[0x2100, 0x214f], // letterlike
			[0x2460, 0x24ff], // enclosed alphanumerics (numbers)
			[0x3000, 0x30ff], // CJK punctuation, kana
			[0x4e00, 0x9fff], // CJK
			[0xac00, 0xd7a3], // Hangul
			[0xfe00, 0xfe0f], // variation selectors
			[0xff00, 0xffef], // fullwidth
			[0x1f300, 0x1faff], // emoji
			[0x1f3fb, 0x1f3ff], // skin tones
			[0x10000, 0x10ffff], // anything astral
		]
		const texts: string[] = []
		for (let i = 0; i < 300; i++) {
			const n = Math.floor(random() * 60)
			let s = ''
			for (let j = 0; j < n; j++) {
				const [lo, hi] = ranges[Math.floor(random() * ranges.length)]
				const c = lo + Math.floor(random() * (hi - lo + 1))
				// U+FEFF (a byte-order mark) is where gpt-tokenizer is wrong: see the test below.
				if (c !== 0xfeff) s += String.fromCodePoint(c)
			}
			texts.push(s)
		}
		expect(mismatches(texts)).toEqual([])
	})

	it('should agree on the repository source files', () => {
		const root = new URL('../../../', import.meta.url).pathname
		const texts = [...new Bun.Glob('src/**/*.ts').scanSync(root)].map((path) => readFileSync(root + path, 'utf8'))
		texts.push(readFileSync(`${root}README.md`, 'utf8'))
		expect(texts.length).toBeGreaterThan(100)
		expect(mismatches(texts)).toEqual([])
	})

	it('should count special tokens as ordinary text (gpt-tokenizer by default throws)', () => {
		expect(() => gpt.countTokens('<|endoftext|>')).toThrow()
		expect(countTokens('<|endoftext|>')).toBe(oracle('<|endoftext|>'))
		expect(countTokens('<|endoftext|>')).toBeGreaterThan(1)
	})

	it('should count a byte-order mark as its own token, where gpt-tokenizer splits it', () => {
		// o200k_base has U+FEFF as a token (rank 5574). gpt-tokenizer looks ranks up by decoding bytes with a
		// TextDecoder, which drops a leading BOM, so it never finds that token and counts the BOM's three bytes as two.
		expect(countTokens('\ufeff')).toBe(1)
		expect(oracle('\ufeff')).toBe(2)
	})
})
