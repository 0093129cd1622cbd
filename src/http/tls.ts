/**
 * HTTPS served by the gateway itself, for a deployment with no proxy in front (TLS_CERT_FILE, TLS_KEY_FILE and, for
 * an encrypted key, TLS_KEY_PASSPHRASE). The files are read once at start: Bun cannot change a listening server's
 * certificate (`server.reload` keeps the old one), so a renewed certificate takes a restart. What is wrong with them
 * stops the start in words naming the variable, before a database is opened, rather than as an OpenSSL code.
 * @module
 */

/** The variables as read (env.ts): both paths or neither. */
export type TlsFiles = { certFile: string; keyFile: string; passphrase?: string }

/** What Bun.serve takes as `tls`. */
export type TlsOptions = { cert: string; key: string; passphrase?: string }

const CERT = /-----BEGIN CERTIFICATE-----/
const KEY = /-----BEGIN (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----/

async function readPem(variable: string, path: string, marker: RegExp, what: string): Promise<string> {
	let text: string
	try {
		text = await Bun.file(path).text()
	} catch (e) {
		throw new Error(`${variable} (${path}) cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
	}
	if (!marker.test(text)) throw new Error(`${variable} (${path}) holds no ${what} in PEM form (-----BEGIN …-----)`)
	return text
}

/** Reads both files, each checked to hold what its variable names. */
export async function readTls(files: TlsFiles): Promise<TlsOptions> {
	const [cert, key] = await Promise.all([
		readPem('TLS_CERT_FILE', files.certFile, CERT, 'certificate'),
		readPem('TLS_KEY_FILE', files.keyFile, KEY, 'private key'),
	])
	return files.passphrase ? { cert, key, passphrase: files.passphrase } : { cert, key }
}

/** Bun.serve's OpenSSL error about the pair, said in the variables' terms (anything else as it came). */
export function tlsProblem(e: unknown, files: TlsFiles): Error | undefined {
	const text = `${(e as { code?: string }).code ?? ''} ${(e as Error).message ?? ''}`
	if (text.includes('KEY_VALUES_MISMATCH')) return new Error(`TLS_KEY_FILE (${files.keyFile}) is not the key of the certificate in TLS_CERT_FILE (${files.certFile})`)
	if (text.includes('BAD_DECRYPT'))
		return new Error(`TLS_KEY_FILE (${files.keyFile}) is encrypted and ${files.passphrase ? 'TLS_KEY_PASSPHRASE does not open it' : 'TLS_KEY_PASSPHRASE is not set'}`)
	if (/PEM|ASN1|X509|SSL/i.test(text)) return new Error(`TLS_CERT_FILE (${files.certFile}) or TLS_KEY_FILE (${files.keyFile}) cannot be used: ${(e as Error).message}`)
	return undefined
}
