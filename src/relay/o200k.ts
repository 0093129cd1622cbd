/**
 * o200k_base token counts (the tokenizer of GPT-4o, GPT-4.1, GPT-5 and the o-series), counting only.
 *
 * Why not gpt-tokenizer: loading it adds ~64 MB of RSS (its rank tables are multi-MB JS sources, parsed into
 * 200k strings and a Map), against a gateway target of 120 MB. Here the same ranks, read from the rank file that
 * package ships, live in one hash table of two typed arrays, 2 MB in all, keyed by two hashes of a token's bytes
 * (see `entries`). No JS string per token, nothing for the GC to trace. A small cache of merged pieces (16 KB)
 * makes up for gpt-tokenizer's (a Map of up to 100,000 pieces).
 *
 * The algorithm is tiktoken's: split the text with the o200k pattern, UTF-8 encode each piece, count a piece that
 * is itself a token as one, else merge byte pairs (always the lowest-ranked pair, leftmost first) and count the
 * parts left. Counts equal gpt-tokenizer's, with two exceptions: special tokens such as `<|endoftext|>` are
 * ordinary text here (its countTokens throws on them by default), and a U+FEFF (byte-order mark) is its own token
 * here, as in tiktoken, where gpt-tokenizer splits it in two.
 * @module
 */
import { readFileSync } from 'node:fs'
import rankPath from 'gpt-tokenizer/data/o200k_base.tiktoken' with { type: 'file' }

/**
 * The o200k pre-tokeniser (tiktoken's pattern; the case-insensitive contraction group spelled out, as JS has no
 * inline `(?i:)`). Sticky and used with test(): the alternatives match every character, so pieces are contiguous
 * and lastIndex alone gives each one's end, with no match array per piece.
 */
const SPLIT =
	/[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/uy

/** Rank of a byte sequence that is no token: above every real rank, so the merge loops need no special case. */
const NONE = 0x7fffffff

/**
 * The table, filled on first count: open addressing with linear probing over 2^18 slots (199,998 ranks, 76% full),
 * two words a slot and nothing else. entries[i] holds the rank in its low 18 bits and 14 bits of the token's first
 * hash above them (-1: empty); checks[i] the token's second hash. A probe is a match when both agree, so a byte
 * sequence that is no token passes for one only when 46 bits of two different hashes agree by chance (~1e-14 per
 * probe; no two tokens of the vocabulary agree, see the unit tests). The tokens' bytes are not kept: 2 MB in all,
 * where keeping and comparing them took 4.5 MB. Every live megabyte costs the gateway about three of peak RSS (the
 * collector lets the heap grow to about three times what is live), see bench/README, tenth VM.
 */
let entries: Int32Array
let checks: Int32Array
const SLOT_BITS = 18
const MASK = (1 << SLOT_BITS) - 1
const RANK_BITS = 18
const RANK_MASK = (1 << RANK_BITS) - 1
/** Past this many ranks probes grow long (and a full table would never end one). */
const MAX_RANKS = Math.floor(((1 << SLOT_BITS) * 4) / 5)
let loaded = false

/** The two hashes of the last `hashOf` (both 32-bit, the first unsigned). */
let hashA = 0
let hashB = 0

/** FNV-1a and a second multiply-xor lane over the same bytes, each ended with a murmur finaliser (well-mixed bits). */
function hashOf(buf: Uint8Array, start: number, end: number): void {
	let a = 0x811c9dc5
	let b = 0x9747b28c
	for (let i = start; i < end; i++) {
		const c = buf[i]
		a = Math.imul(a ^ c, 0x01000193)
		b = Math.imul(b ^ c, 0x5bd1e995)
	}
	a ^= a >>> 16
	a = Math.imul(a, 0x85ebca6b)
	a ^= a >>> 13
	b ^= b >>> 15
	b = Math.imul(b, 0xc2b2ae35)
	b ^= b >>> 16
	hashA = a >>> 0
	hashB = b ^ (end - start)
}

/** Rank of buf[start .. end), or NONE. */
function rankOf(buf: Uint8Array, start: number, end: number): number {
	hashOf(buf, start, end)
	const tag = hashA >>> RANK_BITS
	const check = hashB
	for (let i = hashA & MASK; ; i = (i + 1) & MASK) {
		const e = entries[i]
		if (e === -1) return NONE
		if (e >>> RANK_BITS === tag && checks[i] === check) return e & RANK_MASK
	}
}

/**
 * The rank of a byte sequence, or undefined when it is no token (the table's keys, checked by the unit tests).
 * @example rankOfBytes(new TextEncoder().encode('hello')) !== undefined
 */
export function rankOfBytes(bytes: Uint8Array): number | undefined {
	if (!loaded) load()
	const r = rankOf(bytes, 0, bytes.length)
	return r === NONE ? undefined : r
}

/** Standard base64 alphabet to 6-bit values (255: not base64). */
const B64 = new Uint8Array(128).fill(255)
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i

/**
 * Reads the rank file (lines `base64bytes rank`, ranks 0, 1, 2, … in order) straight from its bytes into the
 * table: each token decoded into a scratch buffer, hashed and placed. Synchronous, as callers count synchronously;
 * readFileSync also reads the copy `bun build --compile` embeds.
 */
function load(): void {
	const file = readFileSync(rankPath)
	entries = new Int32Array(1 << SLOT_BITS).fill(-1)
	checks = new Int32Array(1 << SLOT_BITS)
	let bytes = new Uint8Array(256)
	let rank = 0
	for (let i = 0; i < file.length; rank++) {
		let n = 0
		let j = i
		while (j < file.length && file[j] !== 0x20) j++
		if (bytes.length < j - i) bytes = new Uint8Array(j - i)
		// Four base64 characters to three bytes; '=' padding (255 here) ends the token early.
		for (; i < j; i += 4) {
			const a = B64[file[i]]
			const b = B64[file[i + 1]]
			const c = B64[file[i + 2]]
			const d = B64[file[i + 3]]
			bytes[n++] = (a << 2) | (b >> 4)
			if (c !== 255) bytes[n++] = ((b & 15) << 4) | (c >> 2)
			if (d !== 255) bytes[n++] = ((c & 3) << 6) | d
		}
		let r = 0
		for (i++; i < file.length && file[i] !== 0x0a; i++) r = r * 10 + file[i] - 0x30
		i++
		// Ranks are the slots' payload, so they must be 0, 1, 2, … (true of o200k_base.tiktoken).
		if (r !== rank) throw new Error(`o200k_base.tiktoken: rank ${r} on line ${rank + 1}`)
		if (rank >= MAX_RANKS) throw new Error(`o200k_base.tiktoken: more than ${MAX_RANKS} ranks`)
		hashOf(bytes, 0, n)
		let s = hashA & MASK
		while (entries[s] !== -1) s = (s + 1) & MASK
		entries[s] = ((hashA >>> RANK_BITS) << RANK_BITS) | rank
		checks[s] = hashB
	}
	loaded = true
}

/** Pieces longer than this (in bytes) merge with a heap: the scan below is quadratic. */
const SCAN_MAX = 128

/**
 * Counts of recently merged pieces (those of up to SCAN_MAX bytes), direct-mapped by the piece's first hash and
 * checked by its second (as the table's slots are): words and identifiers recur, and merging costs ~3 table lookups
 * per byte. 2,048 slots, 16 KB, no allocation per piece; twice the speed on non-ASCII text. Pieces that are tokens
 * never get here.
 */
const CACHE_BITS = 11
const cachedCheck = new Int32Array(1 << CACHE_BITS)
/** 0: an empty slot (every piece merged here counts at least 2). */
const cachedCount = new Int32Array(1 << CACHE_BITS)
// Scratch space reused across calls (counting is synchronous, so one set suffices); buf grows with the longest piece.
let buf = new Uint8Array(1024)
const starts = new Int32Array(SCAN_MAX + 1)
const pairRanks = new Int32Array(SCAN_MAX + 1)

/** Parts left after byte-pair merging buf[0 .. n), with a scan for the lowest pair (fast for short pieces). */
function mergeCount(n: number): number {
	// Part i is buf[starts[i] .. starts[i + 1]); pairRanks[i] is the rank of parts i and i + 1 joined.
	for (let i = 0; i <= n; i++) starts[i] = i
	for (let i = 0; i < n - 1; i++) pairRanks[i] = rankOf(buf, i, i + 2)
	pairRanks[n - 1] = NONE
	let parts = n
	while (parts > 1) {
		let best = NONE
		let at = -1
		for (let i = 0; i < parts - 1; i++)
			if (pairRanks[i] < best) {
				best = pairRanks[i]
				at = i
			}
		if (at < 0) break
		// Join parts at and at + 1: drop the boundary between them and the pair rank of the part that went (a loop:
		// copyWithin's call costs more than these few moves).
		for (let i = at + 1; i < parts; i++) {
			starts[i] = starts[i + 1]
			pairRanks[i] = pairRanks[i + 1]
		}
		parts--
		pairRanks[at] = at + 1 < parts ? rankOf(buf, starts[at], starts[at + 2]) : NONE
		if (at > 0) pairRanks[at - 1] = rankOf(buf, starts[at - 1], starts[at + 1])
	}
	return parts
}

/** Heap keys: rank * POSITIONS + position, so the numeric order is by rank, then position. */
const POSITIONS = 2 ** 32

/**
 * Parts left after byte-pair merging buf[0 .. n), for long pieces: a linked list of parts and a min-heap of
 * (rank, position), O(n log n). Popping the lowest rank, ties to the lowest position, is the scan's order exactly.
 * Entries made stale by a merge stay in the heap and are skipped when popped. Long pieces are rare, so these arrays
 * are allocated per call rather than kept (a 64 K-character piece would keep ~7 MB).
 */
function mergeCountLong(n: number): number {
	// next[p] / prev[p]: start of the part after / before the part starting at p; pairAt[p]: rank of that part
	// joined with the next (NONE when none, or once the part is merged away).
	const next = new Int32Array(n + 1)
	const prev = new Int32Array(n + 1)
	const pairAt = new Int32Array(n + 1)
	// At most n - 1 first pairs and two per merge.
	const heap = new Float64Array(3 * n)
	let size = 0
	const push = (key: number) => {
		let i = size++
		while (i > 0) {
			const parent = (i - 1) >> 1
			if (heap[parent] <= key) break
			heap[i] = heap[parent]
			i = parent
		}
		heap[i] = key
	}
	const pop = (): number => {
		const top = heap[0]
		const last = heap[--size]
		let i = 0
		for (;;) {
			let child = 2 * i + 1
			if (child >= size) break
			if (child + 1 < size && heap[child + 1] < heap[child]) child++
			if (heap[child] >= last) break
			heap[i] = heap[child]
			i = child
		}
		heap[i] = last
		return top
	}
	for (let p = 0; p <= n; p++) {
		next[p] = p + 1
		prev[p] = p - 1
		pairAt[p] = NONE
	}
	for (let p = 0; p < n - 1; p++) {
		const r = rankOf(buf, p, p + 2)
		pairAt[p] = r
		if (r !== NONE) push(r * POSITIONS + p)
	}
	let parts = n
	while (size > 0) {
		const key = pop()
		const rank = Math.floor(key / POSITIONS)
		const p = key - rank * POSITIONS
		// Stale: the part was merged away (NONE) or its pair changed since this entry was pushed.
		if (pairAt[p] !== rank) continue
		const q = next[p]
		const after = next[q]
		next[p] = after
		if (after < n) prev[after] = p
		pairAt[q] = NONE
		parts--
		const r = after < n ? rankOf(buf, p, next[after]) : NONE
		pairAt[p] = r
		if (r !== NONE) push(r * POSITIONS + p)
		const before = prev[p]
		if (before >= 0) {
			const rb = rankOf(buf, before, after)
			pairAt[before] = rb
			if (rb !== NONE) push(rb * POSITIONS + before)
		}
	}
	return parts
}

/** Tokens of text[start .. end): UTF-8 into buf (lone surrogates as U+FFFD, like TextEncoder), then BPE. */
function countPiece(text: string, start: number, end: number): number {
	if (buf.length < (end - start) * 3) buf = new Uint8Array((end - start) * 3 * 2)
	let n = 0
	for (let i = start; i < end; i++) {
		let c = text.charCodeAt(i)
		if (c < 0x80) buf[n++] = c
		else if (c < 0x800) {
			buf[n++] = 0xc0 | (c >> 6)
			buf[n++] = 0x80 | (c & 63)
		} else {
			if (c >= 0xd800 && c < 0xe000) {
				const d = i + 1 < end ? text.charCodeAt(i + 1) : 0
				if (c < 0xdc00 && d >= 0xdc00 && d < 0xe000) {
					c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
					i++
					buf[n++] = 0xf0 | (c >> 18)
					buf[n++] = 0x80 | ((c >> 12) & 63)
					buf[n++] = 0x80 | ((c >> 6) & 63)
					buf[n++] = 0x80 | (c & 63)
					continue
				}
				c = 0xfffd
			}
			buf[n++] = 0xe0 | (c >> 12)
			buf[n++] = 0x80 | ((c >> 6) & 63)
			buf[n++] = 0x80 | (c & 63)
		}
	}
	// Every single byte is a token. A whole piece that is a token counts one (tiktoken's rule; for o200k merging
	// would reach it too): the common case, and it skips merging.
	if (n === 1 || rankOf(buf, 0, n) !== NONE) return 1
	if (n > SCAN_MAX) return mergeCountLong(n)
	// The hashes of the whole piece, from the lookup just above.
	const slot = hashA >>> (32 - CACHE_BITS)
	const check = hashB
	if (cachedCount[slot] !== 0 && cachedCheck[slot] === check) return cachedCount[slot]
	const count = mergeCount(n)
	cachedCheck[slot] = check
	cachedCount[slot] = count
	return count
}

// ASCII classes for the scanner below: the pattern's letter, digit, newline and whitespace sets, restricted to ASCII.
const UPPER = 1
const LOWER = 2
const DIGIT = 3
const NEWLINE = 4
const SPACE = 5
const BLANK = 6
const OTHER = 7
const ASCII = new Uint8Array(128).fill(OTHER)
for (let c = 0x41; c <= 0x5a; c++) ASCII[c] = UPPER
for (let c = 0x61; c <= 0x7a; c++) ASCII[c] = LOWER
for (let c = 0x30; c <= 0x39; c++) ASCII[c] = DIGIT
ASCII[0x0a] = ASCII[0x0d] = NEWLINE
ASCII[0x20] = SPACE
ASCII[0x09] = ASCII[0x0b] = ASCII[0x0c] = BLANK

/** Class of text[i]: 0 past the end, -1 for a non-ASCII character (which the scanner leaves to the regex). */
const classAt = (text: string, i: number): number => {
	if (i >= text.length) return 0
	const c = text.charCodeAt(i)
	return c < 0x80 ? ASCII[c] : -1
}

/**
 * End of the piece at pos as the pattern would match it, decided from ASCII characters alone, or -1 when a
 * non-ASCII character could change the answer (it might be a letter, digit, mark or space): the regex then decides.
 * The regex costs about a third of the time on ASCII text; prose and code are mostly ASCII.
 */
function asciiPieceEnd(text: string, pos: number): number {
	const k = classAt(text, pos)
	if (k === DIGIT) {
		// \p{N}{1,3}
		let e = pos + 1
		for (; e < pos + 3; e++) {
			const n = classAt(text, e)
			if (n < 0) return -1
			if (n !== DIGIT) break
		}
		return e
	}
	// Letters, after at most one character that is no newline, letter or digit: Upper* Lower+ or else Upper+ Lower*,
	// which for ASCII letters is one run of capitals and then one of small letters, at least one of them.
	let q = -1
	if (k === UPPER || k === LOWER) q = pos
	else if (k !== NEWLINE) {
		const n = classAt(text, pos + 1)
		if (n < 0) return -1
		if (n === UPPER || n === LOWER) q = pos + 1
	}
	if (q >= 0) {
		let e = q
		let n = classAt(text, e)
		while (n === UPPER) n = classAt(text, ++e)
		while (n === LOWER) n = classAt(text, ++e)
		if (n < 0) return -1
		// An optional contraction: 's 't 'm 'd 'll 've 're in either case.
		if (text.charCodeAt(e) === 0x27) {
			const a = text.charCodeAt(e + 1) | 0x20
			const b = text.charCodeAt(e + 2) | 0x20
			if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) e += 2
			else if ((a === 0x6c && b === 0x6c) || ((a === 0x76 || a === 0x72) && b === 0x65)) e += 3
		}
		return e
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*': punctuation, after at most one space, and any newlines or slashes after it.
	let e = pos
	if (k === SPACE) {
		const n = classAt(text, pos + 1)
		if (n < 0) return -1
		if (n === OTHER) e = pos + 1
	}
	if (classAt(text, e) === OTHER) {
		let n = classAt(text, ++e)
		while (n === OTHER) n = classAt(text, ++e)
		if (n < 0) return -1
		for (let c = text.charCodeAt(e); c === 0x0a || c === 0x0d || c === 0x2f; c = text.charCodeAt(++e));
		return e
	}
	// Whitespace: through its last newline ('\s*[\r\n]+'); else all of it at the end of the text, all but the last
	// character before something else ('\s+(?!\S)'), or the one character ('\s+').
	let lastNewline = -1
	let n = k
	for (; n === SPACE || n === BLANK || n === NEWLINE; n = classAt(text, ++e)) if (n === NEWLINE) lastNewline = e
	if (n < 0) return -1
	if (lastNewline >= 0) return lastNewline + 1
	return n === 0 || e - pos === 1 ? e : e - 1
}

/**
 * The number of o200k_base tokens in text, special tokens counted as the text they are. The first call reads the
 * ranks (30–50 ms).
 * @example countTokens('hello world') === 2
 */
export function countTokens(text: string): number {
	if (!loaded) load()
	let count = 0
	for (let pos = 0; pos < text.length; ) {
		const c = text.charCodeAt(pos)
		let end = c < 0x80 ? asciiPieceEnd(text, pos) : -1
		if (end <= pos) {
			SPLIT.lastIndex = pos
			// Every character starts some alternative; the fallback (one UTF-16 unit) only guards against a bad pattern.
			end = SPLIT.test(text) ? SPLIT.lastIndex : pos + 1
		}
		count += end - pos === 1 && c < 0x80 ? 1 : countPiece(text, pos, end)
		pos = end
	}
	return count
}
