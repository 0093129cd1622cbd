/**
 * Workload identity federation (https://learn.microsoft.com/entra/workload-id/workload-identity-federation): the
 * channel key's `federated_token_file` names a file holding a JWT another issuer gave the gateway (on AKS, the
 * service account token the workload identity webhook projects, `AZURE_FEDERATED_TOKEN_FILE`,
 * /var/run/secrets/azure/tokens/azure-identity-token), which Entra ID takes as the client assertion of the
 * application whose federated credential trusts that issuer and subject. The kubelet rotates the file in place, so it
 * is read again for every token request, as azure-identity's WorkloadIdentityCredential does.
 * @module
 */
import { readFile, stat } from 'node:fs/promises'

/** A projected service account token is about a kilobyte; a file far larger than any JWT is not one. */
const MAX_BYTES = 16_384
/** Three base64url parts: the file is sent to the authority, so nothing else in it is. */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/**
 * The file's JWT. Throws Error saying why the file cannot serve (unreadable, with its errno code; not a JWT), never its
 * content: a channel key naming some other file sends nothing of it anywhere.
 * @example await federatedAssertion('/var/run/secrets/azure/tokens/azure-identity-token') // 'eyJhbGciOiJSUzI1NiIs…'
 */
export async function federatedAssertion(path: string): Promise<string> {
	let text: string
	try {
		// A regular file (the kubelet's is a symlink to one): a device or pipe named by mistake would never end.
		const info = await stat(path)
		if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: info.isDirectory() ? 'EISDIR' : 'not a regular file' })
		if (info.size > MAX_BYTES) throw Object.assign(new Error('too large'), { code: 'EFBIG' })
		text = await readFile(path, 'utf8')
	} catch (e) {
		throw new Error(`${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`)
	}
	const token = text.trim()
	if (!JWT.test(token)) throw new Error(`${path} does not hold a JWT (the token your cluster or identity provider issues)`)
	return token
}
