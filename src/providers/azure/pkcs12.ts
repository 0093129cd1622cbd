/**
 * The private keys and certificates of a PKCS#12 (PFX) file (RFC 7292), as Key Vault, `az ad sp create-for-rbac
 * --create-cert`, Windows and `openssl pkcs12 -export` write them: PFX → authSafe ContentInfo (data; its MAC checked
 * first) → AuthenticatedSafe, a sequence of ContentInfos, each `data` or password-`encryptedData` → SafeContents →
 * SafeBags: keyBag, pkcs8ShroudedKeyBag (an EncryptedPrivateKeyInfo), certBag (X.509), nested safeContentsBag; other
 * bags (CRLs, secrets) are passed over. The public-key modes (a signed or enveloped PFX) are refused. Throws
 * WrongPassword, UnsupportedAlgorithm or Asn1Error (password-based.ts, der.ts); never says the password or bytes.
 * @module
 */
import { type Asn1, Asn1Error, octets, oidOf, parseDer, sequence, smallInt } from './der'
import { decryptPasswordBased, type Password, passwordOf, UnsupportedAlgorithm, verifyMac, WrongPassword } from './password-based'

export type Pkcs12Contents = {
	/** Each private key as PKCS#8 PrivateKeyInfo DER, decrypted. */
	keys: Uint8Array[]
	/** Each X.509 certificate's DER, in the file's order. */
	certificates: Uint8Array[]
}

const OID = {
	data: '1.2.840.113549.1.7.1',
	signedData: '1.2.840.113549.1.7.2',
	envelopedData: '1.2.840.113549.1.7.3',
	encryptedData: '1.2.840.113549.1.7.6',
	keyBag: '1.2.840.113549.1.12.10.1.1',
	pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
	certBag: '1.2.840.113549.1.12.10.1.3',
	safeContentsBag: '1.2.840.113549.1.12.10.1.6',
	x509Certificate: '1.2.840.113549.1.9.22.1',
}

/** The one element of an explicit `[0]`. */
function explicit0(node: Asn1 | undefined, what: string): Asn1 {
	if (!node || node.tag !== 0xa0 || node.children.length !== 1) throw new Asn1Error(`${what}: not an explicit [0]`)
	return node.children[0]!
}

/** A ContentInfo's type and content (RFC 5652 §3). */
function contentInfo(node: Asn1 | undefined, what: string): { type: string; content?: Asn1 } {
	const [type, content] = sequence(node, what, 1)
	return { type: oidOf(type, what), content: content && explicit0(content, what) }
}

/**
 * The keys and certificates of the PFX `bytes`, opened with `password`. An empty or absent password tries both forms
 * writers use for it (password-based.ts).
 * @example readPkcs12(await Bun.file('app.pfx').bytes(), 'its password').certificates.length
 */
export function readPkcs12(bytes: Uint8Array, password: string | undefined): Pkcs12Contents {
	const forms = password ? [passwordOf(password)] : [passwordOf(''), passwordOf('', true)]
	let wrong: unknown
	for (const form of forms) {
		try {
			return readWith(bytes, form)
		} catch (e) {
			if (!(e instanceof WrongPassword)) throw e
			wrong = e
		}
	}
	throw wrong
}

function readWith(bytes: Uint8Array, password: Password): Pkcs12Contents {
	const [version, authSafe, macData] = sequence(parseDer(bytes), 'PFX', 2)
	if (smallInt(version, 'PFX version') !== 3) throw new Asn1Error('PFX version is not 3')
	const auth = contentInfo(authSafe, 'authSafe')
	if (auth.type === OID.signedData) throw new UnsupportedAlgorithm('public-key integrity mode (a PFX signed rather than password-MACed)')
	if (auth.type !== OID.data || !auth.content) throw new Asn1Error('authSafe is not data')
	const safe = octets(auth.content, 'authSafe content')
	// The MAC says a wrong password before any decryption does (a file without one, `-nomac`, is told by its padding).
	if (macData) verifyMac(macData, safe, password)
	const out: Pkcs12Contents = { keys: [], certificates: [] }
	for (const ci of sequence(parseDer(safe), 'AuthenticatedSafe')) {
		const { type, content } = contentInfo(ci, 'AuthenticatedSafe ContentInfo')
		if (!content) continue
		if (type === OID.data) readBags(parseDer(octets(content, 'SafeContents')), password, !!macData, out, 0)
		else if (type === OID.encryptedData) {
			const [, encrypted] = sequence(content, 'EncryptedData', 2)
			const [, algorithm, data] = sequence(encrypted, 'EncryptedContentInfo', 2)
			// encryptedContent is [0] IMPLICIT OCTET STRING, and optional.
			if (data) readBags(decrypted(algorithm, octets(data, 'encryptedContent', 0x80), password, !!macData), password, !!macData, out, 0)
		} else if (type === OID.envelopedData) throw new UnsupportedAlgorithm('public-key privacy mode (a PFX enveloped for a recipient certificate)')
	}
	return out
}

/**
 * Decrypted content, read as DER. Without a MAC, content that does not read as DER after decryption (a padding that
 * checked by chance) is a wrong password too; with one, it is a damaged file.
 */
function decrypted(algorithm: Asn1 | undefined, data: Uint8Array, password: Password, macChecked: boolean): Asn1 {
	const plain = decryptPasswordBased(algorithm, data, password)
	try {
		return parseDer(plain)
	} catch (e) {
		if (macChecked) throw e
		throw new WrongPassword('the password does not decrypt it')
	}
}

function readBags(safeContents: Asn1, password: Password, macChecked: boolean, out: Pkcs12Contents, depth: number): void {
	for (const bag of sequence(safeContents, 'SafeContents')) {
		const [id, value] = sequence(bag, 'SafeBag', 2)
		const v = explicit0(value, 'SafeBag value')
		switch (oidOf(id, 'SafeBag type')) {
			case OID.keyBag:
				out.keys.push(v.der)
				break
			case OID.pkcs8ShroudedKeyBag:
				out.keys.push(decryptedKey(v, password, macChecked))
				break
			case OID.certBag: {
				const [type, cert] = sequence(v, 'CertBag', 2)
				// SDSI certificates (the other certType) are no X.509 certificate: passed over.
				if (oidOf(type, 'CertBag type') === OID.x509Certificate) out.certificates.push(octets(explicit0(cert, 'CertBag value'), 'certificate'))
				break
			}
			case OID.safeContentsBag:
				if (depth >= 4) throw new Asn1Error('SafeContents nested too deep')
				readBags(v, password, macChecked, out, depth + 1)
				break
		}
	}
}

function decryptedKey(encryptedPrivateKeyInfo: Asn1, password: Password, macChecked: boolean): Uint8Array {
	const [algorithm, data] = sequence(encryptedPrivateKeyInfo, 'EncryptedPrivateKeyInfo', 2)
	return decrypted(algorithm, octets(data, 'encryptedData'), password, macChecked).der
}

/**
 * The PKCS#8 PrivateKeyInfo DER of an EncryptedPrivateKeyInfo (RFC 5958 §3; a `-----BEGIN ENCRYPTED PRIVATE KEY-----`
 * PEM's content), decrypted with `password`.
 * @example decryptPrivateKeyInfo(Buffer.from(pemBody, 'base64'), 'its password')
 */
export function decryptPrivateKeyInfo(der: Uint8Array, password: string): Uint8Array {
	return decryptedKey(parseDer(der), passwordOf(password), false)
}
