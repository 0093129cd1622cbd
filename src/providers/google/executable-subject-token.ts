/**
 * The subject token of workload identity federation from a command (an `external_account` whose `credential_source`
 * is `{"executable": {"command", "timeout_millis"?, "output_file"?}}`: https://google.aip.dev/auth/4117,
 * https://cloud.google.com/iam/docs/workload-identity-federation-with-other-providers#executable-sourced-credentials).
 * Run only where the operator allows it, as Google's libraries require: `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`
 * in the gateway's environment; and only from a key the operator's side of the host gave (GATEWAY_CONFIG, the quick
 * start), never one given through the management API (channel-key.ts: a command is a file on the host).
 * - `command` is split on spaces, double quotes keeping a part whole (as Google's libraries split it), and run directly,
 *   no shell, with the gateway's environment and `GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE`, `_TOKEN_TYPE`, `_INTERACTIVE=0`,
 *   `_IMPERSONATED_EMAIL` (when a service account is impersonated) and `_OUTPUT_FILE` (when there is one); killed past
 *   `timeout_millis` (default 30 s, 5 to 120 s);
 * - it prints `{"version": 1, "success": true, "token_type", "id_token" | "saml_response", "expiration_time"?}` (a
 *   token type of `urn:ietf:params:oauth:token-type:id_token`, `…:jwt` or `…:saml2`), or `{"version": 1, "success":
 *   false, "code", "message"}`;
 * - with `output_file`, a response the command left there, successful and not expired, is used without running it
 *   (the command must then give `expiration_time`).
 * @module
 */
import { GatewayError } from '../../core/errors'
import { misconfigured, objectField } from './credential-json'

export type ExecutableSource = { argv: string[]; timeoutMs: number; outputFile?: string }
export type ExecutableContext = { audience: string; subjectTokenType: string; impersonatedEmail?: string }

type Env = Record<string, string | undefined>

const ALLOW_EXECUTABLES = 'GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES'
const TIMEOUT = { min: 5_000, max: 120_000, default: 30_000 }
/** Far above any token response; a command printing more is not answering. */
const MAX_BYTES = 64 * 1024
const OIDC = ['urn:ietf:params:oauth:token-type:id_token', 'urn:ietf:params:oauth:token-type:jwt']
const SAML = 'urn:ietf:params:oauth:token-type:saml2'
const TOKEN = /^[\x21-\x7e]+$/

const NOT_ALLOWED = `\`credential_source.executable\` runs a command on the gateway's host, which the gateway does only when ${ALLOW_EXECUTABLES}=1 is set in its environment (as Google's libraries require)`

/**
 * Refused, naming the variable, unless GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES is 1: asked when the key is saved (the
 * key's `check`, after channel-key.ts has refused a command given through the management API) and before each run.
 */
export function checkExecutablesAllowed(env: Env = process.env): void {
	if (!executablesAllowed(env)) throw misconfigured(NOT_ALLOWED)
}

const executablesAllowed = (env: Env) => env.GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES === '1'

/**
 * The `credential_source.executable` of an external_account key; a malformed member is refused naming it.
 * @example executableSourceOf({ command: '/usr/local/bin/idp-token --audience "my pool"', output_file: '/tmp/idp.json' }) // argv ['/usr/local/bin/idp-token', '--audience', 'my pool']
 */
export function executableSourceOf(cs: Record<string, unknown>): ExecutableSource {
	const ex = objectField(cs, 'executable', 'credential_source.executable')!
	const command = ex.command
	if (typeof command !== 'string' || !command.trim()) throw misconfigured('`credential_source.executable.command` must be the command to run')
	const timeout = ex.timeout_millis ?? TIMEOUT.default
	if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < TIMEOUT.min || timeout > TIMEOUT.max)
		throw misconfigured(`\`credential_source.executable.timeout_millis\` must be a whole number of milliseconds from ${TIMEOUT.min} to ${TIMEOUT.max}`)
	const outputFile = ex.output_file
	if (outputFile !== undefined && (typeof outputFile !== 'string' || !outputFile)) throw misconfigured('`credential_source.executable.output_file` must be a path')
	return { argv: splitCommand(command), timeoutMs: timeout, outputFile }
}

/** `a "b c" d` → `['a', 'b c', 'd']`: spaces part, double quotes keep a part whole and are taken off. */
function splitCommand(command: string): string[] {
	const parts = command.match(/(?:[^\s"]+|"[^"]*")+/g) ?? []
	return parts.map((p) => (p.startsWith('"') && p.endsWith('"') && p.length >= 2 ? p.slice(1, -1) : p))
}

/** The command, in details: its program, never its arguments (which may carry a credential). */
const named = (src: ExecutableSource) => `executable ${src.argv[0]}`

const refused = (src: ExecutableSource, why: string) =>
	new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail: `external_account ${named(src)}: ${why}` })

/**
 * The subject token: the output file's when it holds a good one, else the command's. Throws GatewayError:
 * `upstream_auth` (the channel disabled with why) when the command fails, exits non-zero or answers no token; a
 * retryable `upstream_unreachable` when it does not finish in time.
 */
export async function executableSubjectToken(src: ExecutableSource, ctx: ExecutableContext): Promise<string> {
	if (!executablesAllowed(process.env)) throw refused(src, NOT_ALLOWED)
	const cached = src.outputFile ? await cachedResponse(src) : undefined
	if (cached) return cached
	const stdout = await run(src, ctx)
	const token = tokenOf(src, stdout, 'answered')
	if (token === undefined) throw refused(src, 'answered a response that has expired')
	return token
}

/** The output file's token when the file holds a successful response not yet expired; undefined to run the command. */
async function cachedResponse(src: ExecutableSource): Promise<string | undefined> {
	const file = Bun.file(src.outputFile!)
	let text: string
	try {
		if (!(await file.exists()) || file.size > MAX_BYTES) return undefined
		text = await file.text()
	} catch {
		return undefined
	}
	if (!text.trim()) return undefined
	// A failure or an expired token left there has the command run again; a file that is no response at all is its fault.
	return tokenOf(src, text, `left in its output_file ${src.outputFile}`, true)
}

/**
 * The token of a response; undefined when it has expired (or, for a cached one, failed). The response is never quoted:
 * it holds the token.
 */
function tokenOf(src: ExecutableSource, text: string, where: string, cached = false): string | undefined {
	let r: Record<string, unknown>
	try {
		r = JSON.parse(text) as Record<string, unknown>
		if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new Error('not an object')
	} catch {
		throw refused(src, `${where} something that is not a JSON response`)
	}
	if (typeof r.version !== 'number' || typeof r.success !== 'boolean') throw refused(src, `${where} a response without \`version\` and \`success\``)
	if (r.version > 1) throw refused(src, `${where} a response of version ${r.version}: version 1 is the one there is`)
	if (!r.success) {
		if (cached) return undefined
		const said = [r.code, r.message].filter((x) => typeof x === 'string').join(': ')
		throw refused(src, `failed: ${said.slice(0, 300) || 'no code or message'}`)
	}
	const expires = r.expiration_time
	if (expires !== undefined && typeof expires !== 'number') throw refused(src, `${where} an \`expiration_time\` that is not a number of seconds`)
	if (expires === undefined && src.outputFile) throw refused(src, `${where} no \`expiration_time\`, which a response must have when there is an output_file`)
	if (expires !== undefined && expires < Date.now() / 1000) return undefined
	const type = r.token_type
	const field = type === SAML ? 'saml_response' : OIDC.includes(type as string) ? 'id_token' : undefined
	if (!field) throw refused(src, `${where} a \`token_type\` that is none of ${[...OIDC, SAML].join(', ')}`)
	const token = typeof r[field] === 'string' ? (r[field] as string).trim() : ''
	if (!TOKEN.test(token)) throw refused(src, `${where} no \`${field}\` that is a token (one line of visible characters)`)
	return token
}

/** The command's standard output, once it has exited 0 within its time. */
async function run(src: ExecutableSource, ctx: ExecutableContext): Promise<string> {
	const childEnv: Record<string, string | undefined> = {
		...process.env,
		GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE: ctx.audience,
		GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE: ctx.subjectTokenType,
		// The gateway has no one at a terminal to answer a prompt.
		GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE: '0',
	}
	if (ctx.impersonatedEmail) childEnv.GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL = ctx.impersonatedEmail
	if (src.outputFile) childEnv.GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE = src.outputFile
	let proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
	try {
		// Its own process group, so that the timeout kills what it started too (a shell's `sleep` would hold the pipe open).
		proc = Bun.spawn(src.argv, { env: childEnv, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', detached: true })
	} catch (e) {
		throw refused(src, `cannot be run (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`)
	}
	const late = Promise.withResolvers<'late'>()
	let timedOut = false
	const timer = setTimeout(() => {
		timedOut = true
		killGroup(proc)
		// A process that left the group may still hold the output open: the call does not wait for it.
		setTimeout(() => late.resolve('late'), 1_000).unref()
	}, src.timeoutMs)
	try {
		// Standard error is drained (a full pipe would stall the command) but not kept: it may echo what the command was given.
		const done = Promise.all([bounded(proc.stdout), new Response(proc.stderr).arrayBuffer().catch(() => undefined), proc.exited])
		const ended = await Promise.race([done, late.promise])
		if (ended === 'late' || timedOut)
			throw new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: `external_account ${named(src)} did not finish within ${src.timeoutMs} ms` })
		const [out] = ended
		if (proc.exitCode !== 0) throw refused(src, `exited with ${proc.exitCode ?? `signal ${proc.signalCode}`}`)
		if (out === undefined) throw refused(src, `printed more than ${MAX_BYTES} bytes: no response`)
		return out
	} finally {
		clearTimeout(timer)
	}
}

/** The command and every process it started (its group), else the command alone. */
function killGroup(proc: Bun.Subprocess): void {
	try {
		process.kill(-proc.pid, 'SIGKILL')
	} catch {
		proc.kill('SIGKILL')
	}
}

/** The stream's text, or undefined past MAX_BYTES (the rest drained, not kept). */
async function bounded(stream: ReadableStream<Uint8Array>): Promise<string | undefined> {
	const chunks: Uint8Array[] = []
	let size = 0
	const reader = stream.getReader()
	for (let r = await reader.read(); !r.done; r = await reader.read()) {
		size += r.value.byteLength
		if (size <= MAX_BYTES) chunks.push(r.value)
	}
	return size > MAX_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')
}
