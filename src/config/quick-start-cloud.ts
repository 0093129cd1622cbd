/**
 * The cloud vendors' quick start (quick-start.ts): a default channel from the variables their own SDKs read.
 * - Amazon Bedrock (`bedrock-default`): a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html), else IAM keys in AWS_ACCESS_KEY_ID,
 *   AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), signed for AWS_REGION or AWS_DEFAULT_REGION; calls go to
 *   `https://bedrock-runtime.{region}.amazonaws.com`, or AWS_ENDPOINT_URL_BEDROCK_RUNTIME (the AWS SDKs' per-service
 *   endpoint variable, https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html).
 * - Azure OpenAI (`azure-default`): AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_API_KEY and OPENAI_API_VERSION, as the
 *   openai SDK's AzureOpenAI reads them; without a key, the service principal of AZURE_TENANT_ID and AZURE_CLIENT_ID
 *   with AZURE_CLIENT_SECRET, or AZURE_CLIENT_CERTIFICATE_PATH (a PEM or a PFX; AZURE_CLIENT_CERTIFICATE_PASSWORD,
 *   AZURE_CLIENT_SEND_CERTIFICATE_CHAIN), as
 *   azure-identity's EnvironmentCredential reads them
 *   (https://learn.microsoft.com/javascript/api/@azure/identity/environmentcredential), or AZURE_FEDERATED_TOKEN_FILE,
 *   as its WorkloadIdentityCredential does (AKS workload identity); and AZURE_AUTHORITY_HOST. Deployments are named by their
 *   owner: AZURE_OPENAI_DEPLOYMENTS lists them, else the channel serves OpenAI's model names (the portal's default
 *   deployment name is the model's).
 * - Google Vertex AI (`vertex-default`): the credentials file GOOGLE_APPLICATION_CREDENTIALS names (a service-account
 *   key, `gcloud auth application-default login`'s authorized_user or, with --impersonate-service-account,
 *   impersonated_service_account, workload identity federation's external_account),
 *   in GOOGLE_CLOUD_PROJECT (default: the key's project_id, or the others' quota_project_id), in GOOGLE_CLOUD_LOCATION
 *   (default `global`), as Google's SDKs read them
 *   (https://cloud.google.com/docs/authentication/application-default-credentials); GOOGLE_VERTEX_BASE_URL (read by
 *   @google/genai) replaces Google's host. It serves `claude-*` and `gemini-*` unless ANTHROPIC_API_KEY or GEMINI_API_KEY
 *   serves that family, and Vertex's own embedding models.
 * A variable that cannot be used stops the start naming it, never quoting a secret. Variables the cloud SDKs share with
 * other uses (IAM keys without a region, a credentials file of a type Vertex channels do not take) are passed over with a
 * warning rather than stopping a gateway that never meant to call that cloud.
 * @module
 */
import { servicePrincipalOf } from '../providers/azure-entra'
import { GOOGLE_CREDENTIAL_TYPES } from '../providers/google/credentials'
import { type EnvReader, envReader } from './env-vars'
import { ConfigError } from './gateway-file'
import { OPENAI_MODELS } from './quick-start'

export type QuickStartChannel = {
	type: 'openai' | 'anthropic' | 'gemini' | 'bedrock' | 'azure' | 'vertex'
	baseUrl: string
	apiKey: string
	models: string[]
	settings?: Record<string, string>
	/** The variable(s) each field came from (`api_key`, `settings.region`…), for messages. */
	origin: Record<string, string>
}

type Context = {
	/** Whether GATEWAY_CONFIG has a channel of the type (its quick start then does not apply). */
	skip: (type: string) => boolean
	/** The types whose own API's quick start applies (`openai`, `anthropic`, `gemini`). */
	firstParty: ReadonlySet<string>
	warn: (message: string) => void
}

/**
 * Bedrock's model ids, which no other vendor's look like: a provider's (`anthropic.claude-*`, `amazon.nova-*`,
 * `meta.llama*`…), or a cross-region inference profile's, its geography first (`us.anthropic.claude-*`,
 * `global.amazon.nova-*`: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html).
 */
export const BEDROCK_MODELS = [
	...['anthropic', 'amazon', 'meta', 'mistral', 'cohere', 'ai21', 'deepseek', 'openai', 'qwen', 'writer'].map((p) => `${p}.*`),
	...['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'].map((g) => `${g}.*`),
]

const WEB = ['http:', 'https:'] as const
const AWS_REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/
/** The patterns of channel-settings.ts, so that what is stored is what a GATEWAY_CONFIG entry could say. */
const GCP_PROJECT = /^[a-z][a-z0-9.:-]*[a-z0-9]$/
const GCP_LOCATION = /^(?:global|us|eu|[a-z]{2,}(?:-[a-z]+)+\d+)$/
const API_VERSION = /^[A-Za-z0-9.-]+$/
/** An Azure deployment name (letters, digits, `.`, `_`, `-`), or a glob of them. */
const DEPLOYMENT = /^[A-Za-z0-9._*-]+$/

/** The cloud quick-start channels `vars` make; throws ConfigError naming every variable that cannot be used. */
export async function cloudQuickStarts(vars: Record<string, string | undefined>, ctx: Context): Promise<QuickStartChannel[]> {
	const r = envReader(vars)
	const made = [bedrock(r, ctx), await azure(r, ctx), await vertex(r, ctx)]
	try {
		r.done()
	} catch (e) {
		throw new ConfigError((e as Error).message)
	}
	return made.filter((q) => q !== undefined)
}

function bedrock(r: EnvReader, ctx: Context): QuickStartChannel | undefined {
	if (ctx.skip('bedrock')) return undefined
	const token = r.secret('AWS_BEARER_TOKEN_BEDROCK')
	const iam = { AWS_ACCESS_KEY_ID: r.secret('AWS_ACCESS_KEY_ID'), AWS_SECRET_ACCESS_KEY: r.secret('AWS_SECRET_ACCESS_KEY'), AWS_SESSION_TOKEN: r.secret('AWS_SESSION_TOKEN') }
	if (!token && !(iam.AWS_ACCESS_KEY_ID && iam.AWS_SECRET_ACCESS_KEY)) return undefined
	const regionVar = r.text('AWS_REGION') ? 'AWS_REGION' : 'AWS_DEFAULT_REGION'
	const region = r.text('AWS_REGION') ?? r.text('AWS_DEFAULT_REGION')
	if (!region) {
		// A Bedrock API key is meant for Bedrock; IAM keys may be there for anything else AWS (S3…).
		if (token) r.refuse('AWS_REGION', 'must be set with AWS_BEARER_TOKEN_BEDROCK (or AWS_DEFAULT_REGION): the Bedrock runtime endpoint is per region, e.g. us-east-1')
		else ctx.warn('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set, but neither AWS_REGION nor AWS_DEFAULT_REGION: no bedrock-default channel')
		return undefined
	}
	if (!AWS_REGION.test(region)) {
		r.refuse(regionVar, `must be an AWS region such as us-east-1, got "${region}"`)
		return undefined
	}
	const baseUrl = r.url('AWS_ENDPOINT_URL_BEDROCK_RUNTIME', WEB) ?? `https://bedrock-runtime.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`
	// Sent in a header or signed as they are: a pasted line break would fail every call, and a colon splits the IAM key.
	const unusable = (name: string, v: string | undefined) => {
		if (v === undefined || !/[\s:]/.test(v)) return false
		r.refuse(name, 'has spaces, line breaks or a colon, which no AWS key has')
		return true
	}
	if (token) {
		if (unusable('AWS_BEARER_TOKEN_BEDROCK', token)) return undefined
		return { type: 'bedrock', baseUrl, apiKey: token, models: BEDROCK_MODELS, settings: { region }, origin: { api_key: 'AWS_BEARER_TOKEN_BEDROCK', 'settings.region': regionVar } }
	}
	// Every unusable one named, not the first alone.
	if (Object.entries(iam).filter(([name, v]) => unusable(name, v)).length) return undefined
	const used = Object.entries(iam).filter(([, v]) => v)
	return {
		type: 'bedrock',
		baseUrl,
		apiKey: used.map(([, v]) => v).join(':'),
		models: BEDROCK_MODELS,
		settings: { region },
		origin: { api_key: used.map(([name]) => name).join(', '), 'settings.region': regionVar },
	}
}

async function azure(r: EnvReader, ctx: Context): Promise<QuickStartChannel | undefined> {
	if (ctx.skip('azure')) return undefined
	const key = r.secret('AZURE_OPENAI_API_KEY')
	const ids = { AZURE_TENANT_ID: r.text('AZURE_TENANT_ID'), AZURE_CLIENT_ID: r.text('AZURE_CLIENT_ID') }
	// azure-identity's order: EnvironmentCredential's secret, then its certificate, then WorkloadIdentityCredential.
	const proofs = { AZURE_CLIENT_SECRET: r.secret('AZURE_CLIENT_SECRET'), AZURE_CLIENT_CERTIFICATE_PATH: r.text('AZURE_CLIENT_CERTIFICATE_PATH'), AZURE_FEDERATED_TOKEN_FILE: r.text('AZURE_FEDERATED_TOKEN_FILE') }
	if (!r.text('AZURE_OPENAI_ENDPOINT')) {
		// The Entra variables alone are azure-identity's, for any Azure service; an Azure OpenAI key is not.
		if (key) r.refuse('AZURE_OPENAI_ENDPOINT', 'must be set with AZURE_OPENAI_API_KEY: the resource endpoint, e.g. https://my-resource.openai.azure.com')
		return undefined
	}
	if (!key && ![...Object.values(ids), ...Object.values(proofs)].some(Boolean)) return undefined
	const endpoint = r.url('AZURE_OPENAI_ENDPOINT', WEB)
	let apiKey: string
	let origin: Record<string, string>
	const settings: Record<string, string> = {}
	if (key) {
		// azure.ts sends it as the api-key header, whose ends' whitespace is dropped but not a space within.
		if (/\s/.test(key.trim())) r.refuse('AZURE_OPENAI_API_KEY', 'has spaces or line breaks within, which no Azure key has')
		apiKey = key
		origin = { api_key: 'AZURE_OPENAI_API_KEY' }
	} else {
		const sp = await servicePrincipalFromEnv(r, ids, proofs)
		if (!sp) return undefined
		apiKey = sp.apiKey
		origin = sp.origin
		const authority = r.url('AZURE_AUTHORITY_HOST', WEB)
		if (authority) {
			settings.authority_host = authority
			origin['settings.authority_host'] = 'AZURE_AUTHORITY_HOST'
		}
	}
	const version = r.text('OPENAI_API_VERSION')
	if (version && !API_VERSION.test(version)) r.refuse('OPENAI_API_VERSION', `must be an api-version such as 2025-04-01-preview, got "${version}"`)
	else if (version) settings.api_version = version
	const deployments = r.list('AZURE_OPENAI_DEPLOYMENTS', 'deployment names (letters, digits, . _ -) or globs of them (*)', (d) => DEPLOYMENT.test(d))
	if (!endpoint) return undefined
	let models = deployments
	if (!models.length) {
		// openai-default serves those names already: both would get each call in turn, Azure answering 404 for every model not deployed there.
		if (ctx.firstParty.has('openai')) {
			ctx.warn(`${origin.api_key} set with AZURE_OPENAI_ENDPOINT, but no azure-default channel: OPENAI_API_KEY's openai-default serves OpenAI's model names; list the deployments in AZURE_OPENAI_DEPLOYMENTS`)
			return undefined
		}
		models = OPENAI_MODELS
	}
	return { type: 'azure', baseUrl: endpoint, apiKey, models, settings, origin }
}

/**
 * The Entra ID service principal of AZURE_TENANT_ID and AZURE_CLIENT_ID with the first proof set: AZURE_CLIENT_SECRET,
 * the PEM or PFX at AZURE_CLIENT_CERTIFICATE_PATH (with AZURE_CLIENT_CERTIFICATE_PASSWORD and
 * AZURE_CLIENT_SEND_CERTIFICATE_CHAIN), or AZURE_FEDERATED_TOKEN_FILE
 * (AKS workload identity, whose webhook sets all three); undefined, each unusable variable refused, when none can serve.
 */
async function servicePrincipalFromEnv(
	r: EnvReader,
	ids: Record<'AZURE_TENANT_ID' | 'AZURE_CLIENT_ID', string | undefined>,
	proofs: Record<'AZURE_CLIENT_SECRET' | 'AZURE_CLIENT_CERTIFICATE_PATH' | 'AZURE_FEDERATED_TOKEN_FILE', string | undefined>,
): Promise<{ apiKey: string; origin: Record<string, string> } | undefined> {
	const proof = (Object.keys(proofs) as Array<keyof typeof proofs>).find((name) => proofs[name])
	const missing = [...Object.entries(ids).filter(([, v]) => !v).map(([name]) => name), ...(proof ? [] : ['AZURE_CLIENT_SECRET (or AZURE_CLIENT_CERTIFICATE_PATH, or AZURE_FEDERATED_TOKEN_FILE)'])]
	if (missing.length) {
		const set = [...Object.entries(ids), ...Object.entries(proofs)].filter(([, v]) => v).map(([name]) => name)
		r.refuse(missing.join(', '), `must be set with ${set.join(', ')} for Microsoft Entra ID (a service principal; managed identity is not supported), or set AZURE_OPENAI_API_KEY`)
		return undefined
	}
	const fields: Record<string, unknown> = { tenant_id: ids.AZURE_TENANT_ID, client_id: ids.AZURE_CLIENT_ID }
	if (proof === 'AZURE_CLIENT_SECRET') fields.client_secret = proofs.AZURE_CLIENT_SECRET
	else if (proof === 'AZURE_FEDERATED_TOKEN_FILE') fields.federated_token_file = proofs.AZURE_FEDERATED_TOKEN_FILE
	else {
		const path = proofs.AZURE_CLIENT_CERTIFICATE_PATH!
		let bytes: Uint8Array
		try {
			bytes = await Bun.file(path).bytes()
		} catch (e) {
			r.refuse('AZURE_CLIENT_CERTIFICATE_PATH', `names ${path}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`)
			return undefined
		}
		const text = new TextDecoder().decode(bytes)
		if (text.includes('-----BEGIN')) fields.certificate = text
		// A PFX (.pfx, .p12) is DER, a SEQUENCE: the key takes it in base64.
		else if (bytes[0] === 0x30) fields.certificate = Buffer.from(bytes).toString('base64')
		else {
			r.refuse('AZURE_CLIENT_CERTIFICATE_PATH', `names ${path}, which is neither a PEM file nor a PKCS#12 (PFX) file`)
			return undefined
		}
		// azure-identity's name for the password of the PFX or of the PEM's encrypted key.
		const password = r.secret('AZURE_CLIENT_CERTIFICATE_PASSWORD')
		if (password !== undefined) fields.certificate_password = password
		fields.send_certificate_chain = r.bool('AZURE_CLIENT_SEND_CERTIFICATE_CHAIN', false)
	}
	const apiKey = JSON.stringify(fields)
	const origin = { api_key: `AZURE_TENANT_ID, AZURE_CLIENT_ID, ${proof}${proof === 'AZURE_CLIENT_CERTIFICATE_PATH' ? ` (${proofs.AZURE_CLIENT_CERTIFICATE_PATH})` : ''}` }
	try {
		servicePrincipalOf(apiKey)
	} catch (e) {
		// Said of the key's JSON fields (azure-entra.ts): said here of the variables they came from.
		const FIELD_VARS: Record<string, string> = {
			tenant_id: 'AZURE_TENANT_ID',
			client_id: 'AZURE_CLIENT_ID',
			client_secret: 'AZURE_CLIENT_SECRET',
			certificate: 'AZURE_CLIENT_CERTIFICATE_PATH',
			certificate_password: 'AZURE_CLIENT_CERTIFICATE_PASSWORD',
			federated_token_file: 'AZURE_FEDERATED_TOKEN_FILE',
		}
		const why = (e as Error).message.replace(/^azure channel key: /, '').replace(/`(tenant_id|client_id|client_secret|certificate|certificate_password|federated_token_file)`/g, (_, f: string) => FIELD_VARS[f]!)
		const [, name, rest] = /^(AZURE_[A-Z_]+) (.*)$/s.exec(why) ?? [why, proof, why]
		r.refuse(name!, rest!)
		return undefined
	}
	return { apiKey, origin }
}

async function vertex(r: EnvReader, ctx: Context): Promise<QuickStartChannel | undefined> {
	if (ctx.skip('vertex')) return undefined
	const path = r.text('GOOGLE_APPLICATION_CREDENTIALS')
	if (!path) return undefined
	let text: string
	try {
		text = await Bun.file(path).text()
	} catch (e) {
		r.refuse('GOOGLE_APPLICATION_CREDENTIALS', `names ${path}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`)
		return undefined
	}
	let file: Record<string, unknown>
	try {
		file = JSON.parse(text)
		if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new Error('not an object')
	} catch {
		r.refuse('GOOGLE_APPLICATION_CREDENTIALS', `names ${path}, which is not a JSON credentials file`)
		return undefined
	}
	const type = file.type
	if (!(GOOGLE_CREDENTIAL_TYPES as readonly unknown[]).includes(type)) {
		// external_account_authorized_user, gdch_service_account…: Application Default Credentials for other Google
		// services, perhaps, but not a kind of key this gateway takes.
		const named = typeof type === 'string' && /^[a-z_]{1,40}$/.test(type) ? `"${type}"` : 'none'
		ctx.warn(`GOOGLE_APPLICATION_CREDENTIALS names ${path}, a credentials file of type ${named}: the Vertex AI quick start takes a ${GOOGLE_CREDENTIAL_TYPES.join(', ')} file; no vertex-default channel`)
		return undefined
	}
	// A service account's key names its project; the other credentials may name the quota project they bill.
	const own = type === 'service_account' ? 'project_id' : 'quota_project_id'
	const projectVar = r.text('GOOGLE_CLOUD_PROJECT') ? 'GOOGLE_CLOUD_PROJECT' : 'GOOGLE_APPLICATION_CREDENTIALS'
	const project = r.text('GOOGLE_CLOUD_PROJECT') ?? (typeof file[own] === 'string' && file[own] ? (file[own] as string) : undefined)
	if (!project) r.refuse('GOOGLE_CLOUD_PROJECT', `must be set: the ${type} file ${path} names no ${own}`)
	else if (!GCP_PROJECT.test(project)) r.refuse(projectVar, `must name a Google Cloud project id such as my-project-123, got "${project}"`)
	const location = r.text('GOOGLE_CLOUD_LOCATION') ?? 'global'
	if (!GCP_LOCATION.test(location)) r.refuse('GOOGLE_CLOUD_LOCATION', `must be a Vertex AI location such as global, us-east5 or europe-west1, got "${location}"`)
	const baseUrl = r.url('GOOGLE_VERTEX_BASE_URL', WEB) ?? 'https://aiplatform.googleapis.com'
	if (!project) return undefined
	// A family that ANTHROPIC_API_KEY or GEMINI_API_KEY serves stays with it: `claude-*` on both would send Vertex's
	// `claude-…@20250929` to Anthropic as often as not, and Anthropic's dated ids to Vertex, each answering 404.
	const families = [
		{ glob: 'claude-*', owner: 'anthropic', env: 'ANTHROPIC_API_KEY' },
		{ glob: 'gemini-*', owner: 'gemini', env: 'GEMINI_API_KEY' },
	]
	const kept = families.filter((f) => ctx.firstParty.has(f.owner))
	if (kept.length) ctx.warn(`vertex-default does not serve ${kept.map((f) => `${f.glob} (${f.env}'s ${f.owner}-default does)`).join(' or ')}: GATEWAY_CONFIG can give Vertex AI those models too`)
	const models = [...families.filter((f) => !kept.includes(f)).map((f) => f.glob), 'text-embedding-005', 'text-multilingual-embedding-*']
	return {
		type: 'vertex',
		baseUrl,
		apiKey: text,
		models,
		settings: { project, region: location },
		origin: { api_key: `GOOGLE_APPLICATION_CREDENTIALS (${path})`, 'settings.project': projectVar, 'settings.region': 'GOOGLE_CLOUD_LOCATION' },
	}
}
