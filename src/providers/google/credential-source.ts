/**
 * Where an external_account key's subject token comes from (`credential_source`, https://google.aip.dev/auth/4117), by
 * its members: `environment_id` (AWS: aws-subject-token.ts), `executable` (a command: executable-subject-token.ts),
 * `file` or `url` (subject-token.ts). `certificate` (X.509 workload certificates, mutual TLS to STS) is refused naming it.
 * @module
 */
import { type AwsSource, awsSourceOf, awsSubjectToken } from './aws-subject-token'
import { misconfigured, objectField } from './credential-json'
import { type ExecutableSource, executableSourceOf, executableSubjectToken } from './executable-subject-token'
import { readSubjectToken, type SubjectSource, subjectSourceOf } from './subject-token'

export type CredentialSource = { kind: 'read'; read: SubjectSource } | { kind: 'aws'; aws: AwsSource } | { kind: 'executable'; executable: ExecutableSource }

/**
 * What the token is asked for: the exchange's audience and token type, the service account impersonated after it; and
 * `publicOnly`, why a URL source may be read from a public address only (credentials.ts), when it may.
 */
export type SubjectContext = { audience: string; subjectTokenType: string; impersonationUrl?: string; publicOnly?: string }

/** The key's `credential_source`; refused naming the member when it is missing, unknown or malformed. */
export function credentialSourceOf(o: Record<string, unknown>): CredentialSource {
	const cs = objectField(o, 'credential_source')
	if (!cs) throw misconfigured('an external_account key needs `credential_source`')
	if (cs.executable !== undefined) return { kind: 'executable', executable: executableSourceOf(cs) }
	if (cs.environment_id !== undefined) return { kind: 'aws', aws: awsSourceOf(cs) }
	if (cs.certificate !== undefined) throw misconfigured('`credential_source.certificate` (X.509 workload certificates) is not supported: use `credential_source.file` or `credential_source.url`')
	return { kind: 'read', read: subjectSourceOf(cs) }
}

/**
 * The key's member naming something on the gateway's host that each token fetch reads or runs (channel-key.ts takes
 * such keys only from the operator's side of the host), if any.
 */
export function hostMemberOf(src: CredentialSource): string | undefined {
	if (src.kind === 'executable') return 'credential_source.executable.command'
	if (src.kind === 'read' && src.read.file !== undefined) return 'credential_source.file'
	return undefined
}

/** The subject token, and every value it was made with that nothing may say (the token itself among them). */
export async function subjectTokenOf(src: CredentialSource, ctx: SubjectContext): Promise<{ token: string; secrets: string[] }> {
	if (src.kind === 'aws') {
		const { token, secrets } = await awsSubjectToken(src.aws, ctx.audience)
		return { token, secrets: [token, ...secrets] }
	}
	if (src.kind === 'executable') {
		const impersonatedEmail = ctx.impersonationUrl && /serviceAccounts\/([^/:]+):generateAccessToken/.exec(ctx.impersonationUrl)?.[1]
		const token = await executableSubjectToken(src.executable, { audience: ctx.audience, subjectTokenType: ctx.subjectTokenType, impersonatedEmail: impersonatedEmail || undefined })
		return { token, secrets: [token] }
	}
	const token = await readSubjectToken(src.read, ctx.publicOnly)
	// The source's headers may carry its own credential (a bearer for the provider); short values (`Metadata: True`) are none.
	return { token, secrets: [token, ...Object.values(src.read.headers).filter((v) => v.length >= 8)] }
}
