/**
 * A reader of ASN.1 in DER (X.690), enough for PKCS#12 files and encrypted PKCS#8 keys: tag, length, content, the
 * elements within a constructed one. It also takes the BER that some PKCS#12 writers use (indefinite lengths, an
 * OCTET STRING in pieces). Low tag numbers only (all these formats use). Throws Asn1Error, whose message never quotes
 * the bytes.
 * @module
 */

export class Asn1Error extends Error {}

/** Universal tags these formats use. */
export const TAG = { INTEGER: 0x02, OCTET_STRING: 0x04, NULL: 0x05, OID: 0x06, SEQUENCE: 0x30, SET: 0x31 } as const

export type Asn1 = {
	/** The identifier octet: class, constructed bit and tag number (`0x30` a SEQUENCE, `0xa0` a constructed [0]). */
	tag: number
	/** The content octets (a constructed element's: its elements' encodings). */
	content: Uint8Array
	/** The whole encoding, identifier and length included. */
	der: Uint8Array
	/** The elements of a constructed element; empty for a primitive one. */
	children: Asn1[]
}

/** Nesting deeper than this is no certificate file's: refused rather than recursed into. */
const MAX_DEPTH = 48

const isConstructed = (tag: number) => (tag & 0x20) !== 0

/**
 * The one element `bytes` holds, all of them.
 * @example parseDer(Uint8Array.of(0x02, 0x01, 0x03)).content // Uint8Array [3]
 */
export function parseDer(bytes: Uint8Array): Asn1 {
	const [node, end] = readAt(bytes, 0, 0)
	if (end !== bytes.length) throw new Asn1Error('bytes after the end of the ASN.1 element')
	return node
}

function readAt(bytes: Uint8Array, at: number, depth: number): [Asn1, number] {
	if (depth > MAX_DEPTH) throw new Asn1Error('ASN.1 nested too deep')
	if (at + 2 > bytes.length) throw new Asn1Error('ASN.1 cut short')
	const tag = bytes[at]!
	if ((tag & 0x1f) === 0x1f) throw new Asn1Error('ASN.1 high tag numbers are not used by these formats')
	let len = bytes[at + 1]!
	let start = at + 2
	if (len === 0x80) {
		// BER's indefinite length: elements up to an end-of-contents (00 00).
		if (!isConstructed(tag)) throw new Asn1Error('ASN.1 indefinite length on a primitive element')
		const children: Asn1[] = []
		let p = start
		for (;;) {
			if (p + 2 > bytes.length) throw new Asn1Error('ASN.1 cut short')
			if (bytes[p] === 0 && bytes[p + 1] === 0) break
			const [child, next] = readAt(bytes, p, depth + 1)
			children.push(child)
			p = next
		}
		return [{ tag, content: bytes.subarray(start, p), der: bytes.subarray(at, p + 2), children }, p + 2]
	}
	if (len & 0x80) {
		const n = len & 0x7f
		// Four length octets reach 4 GiB: more than any certificate file.
		if (n > 4 || start + n > bytes.length) throw new Asn1Error('ASN.1 length out of range')
		len = 0
		for (let i = 0; i < n; i++) len = len * 256 + bytes[start + i]!
		start += n
	}
	const end = start + len
	if (end > bytes.length) throw new Asn1Error('ASN.1 cut short')
	const content = bytes.subarray(start, end)
	const children: Asn1[] = []
	if (isConstructed(tag)) for (let p = start; p < end; ) {
		const [child, next] = readAt(bytes.subarray(0, end), p, depth + 1)
		children.push(child)
		p = next
	}
	return [{ tag, content, der: bytes.subarray(at, end), children }, end]
}

/** The element, checked to carry `tag` (`what` names it in the error). */
export function expectTag(node: Asn1 | undefined, tag: number, what: string): Asn1 {
	if (!node || node.tag !== tag) throw new Asn1Error(`${what}: not the ASN.1 element expected`)
	return node
}

/** A SEQUENCE's elements, at least `min` of them. */
export function sequence(node: Asn1 | undefined, what: string, min = 0): Asn1[] {
	const s = expectTag(node, TAG.SEQUENCE, what)
	if (s.children.length < min) throw new Asn1Error(`${what}: too few elements`)
	return s.children
}

/** An OBJECT IDENTIFIER in dotted form. */
export function oidOf(node: Asn1 | undefined, what: string): string {
	const c = expectTag(node, TAG.OID, what).content
	if (!c.length) throw new Asn1Error(`${what}: empty object identifier`)
	const arcs: number[] = []
	let v = 0
	for (const b of c) {
		v = v * 128 + (b & 0x7f)
		if (v > Number.MAX_SAFE_INTEGER / 128) throw new Asn1Error(`${what}: object identifier arc too large`)
		if (b & 0x80) continue
		if (!arcs.length) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80)
		else arcs.push(v)
		v = 0
	}
	if (c[c.length - 1]! & 0x80) throw new Asn1Error(`${what}: object identifier cut short`)
	return arcs.join('.')
}

/** A non-negative INTEGER that fits a JavaScript number (a version, an iteration count, a key length). */
export function smallInt(node: Asn1 | undefined, what: string): number {
	const c = expectTag(node, TAG.INTEGER, what).content
	if (!c.length || c[0]! & 0x80) throw new Asn1Error(`${what}: not a non-negative integer`)
	let v = 0
	for (const b of c) {
		v = v * 256 + b
		if (v > Number.MAX_SAFE_INTEGER / 256) throw new Asn1Error(`${what}: integer too large`)
	}
	return v
}

/** An OCTET STRING's bytes (`tag` for an implicitly tagged one), its pieces joined when BER sent it constructed. */
export function octets(node: Asn1 | undefined, what: string, tag: number = TAG.OCTET_STRING): Uint8Array {
	if (node && node.tag === tag) return node.content
	if (node && node.tag === (tag | 0x20)) return Buffer.concat(node.children.map((c) => octets(c, what)))
	throw new Asn1Error(`${what}: not an OCTET STRING`)
}

/** An AlgorithmIdentifier: its OID and parameters (undefined when absent, NULL included). */
export function algorithmOf(node: Asn1 | undefined, what: string): { oid: string; params?: Asn1 } {
	const [id, params] = sequence(node, what, 1)
	return { oid: oidOf(id, what), params: params && params.tag !== TAG.NULL ? params : undefined }
}
