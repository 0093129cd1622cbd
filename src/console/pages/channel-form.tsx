/** Create or edit an upstream channel. The upstream key is write-only: left empty on edit, it stays as it is. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { FormModal } from '../components/modal'
import { Alert, SelectField, TextArea, TextField } from '../components/ui'
import { channelOrigin } from '../lib/channel-source'
import { formatPairs, parseJsonObject, parseList, parsePairs } from '../lib/input'
import { CHANNEL_TYPES, type Channel } from '../types'

/** What each vendor's base URL looks like (README, GATEWAY_CONFIG): OpenAI-compatible ones include `/v1`, Anthropic's does not. */
const BASE_URL_EXAMPLE: Record<string, string> = {
	openai: 'https://api.openai.com/v1',
	anthropic: 'https://api.anthropic.com',
	gemini: 'https://generativelanguage.googleapis.com',
	azure: 'https://RESOURCE.openai.azure.com',
	bedrock: 'https://bedrock-runtime.us-east-1.amazonaws.com',
	vertex: 'https://aiplatform.googleapis.com',
}

const BASE_URL_HINT: Record<string, string> = {
	openai: 'Includes /v1.',
	anthropic: 'Without /v1.',
	gemini: 'The host; /v1beta is added.',
	azure: 'The resource endpoint (deployments are the upstream model names), or …/openai/v1 for the v1 API.',
	bedrock: 'The Bedrock runtime endpoint of a region, or a proxy (then IAM keys need the Region).',
	vertex: "Google's host (calls go to the region's own), or a proxy or private endpoint, kept as it is.",
}

/** What the upstream key of each type looks like (README: the azure channel notes, "Amazon Bedrock", "Google Vertex AI"). */
const KEY_HINT: Record<string, string> = {
	bedrock: 'A Bedrock API key (ABSK…), or IAM keys as ACCESS_KEY_ID:SECRET_ACCESS_KEY, or ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN for temporary ones.',
	vertex:
		"A Google credentials file (JSON) pasted whole: the service-account key file as Google Cloud downloads it, gcloud auth application-default login's authorized_user file, or a workload identity federation external_account configuration; or an express mode API key (Gemini models only).",
	azure:
		'The resource key (KEY 1 or KEY 2), sent as api-key; or, for Microsoft Entra ID, a service principal as JSON: {"tenant_id": "…", "client_id": "…", "client_secret": "…"} (the gateway fetches its tokens; settings.authority_host for a sovereign cloud).',
}

/** The `settings` members some types take, edited as fields of their own rather than in the Settings JSON. */
const REGION_HINT: Record<string, string> = {
	bedrock: 'The AWS region IAM keys are signed for, e.g. us-east-1. Optional with a bedrock-runtime.{region} base URL.',
	vertex: "The location calls go to, e.g. global, us-east5, europe-west1. Default: the base URL's, else global.",
}
const PROJECT_HINT: Record<string, string> = {
	vertex: "The Google Cloud project id. Default: the key file's project_id.",
}
/** The types that take a guardrail (README, "Guardrails" under Amazon Bedrock): its identifier and version go together. */
const GUARDRAIL_TYPES = new Set(['bedrock'])

/** `settings` without the members that have a field of their own for `type`, and those members' values. */
function splitSettings(type: string, settings: Record<string, unknown> = {}) {
	const rest = { ...settings }
	const own = (name: string, applies: boolean) => {
		if (!applies || typeof rest[name] !== 'string') return ''
		const value = rest[name] as string
		delete rest[name]
		return value
	}
	const region = own('region', type in REGION_HINT)
	const project = own('project', type in PROJECT_HINT)
	const guardrail = own('guardrail_identifier', GUARDRAIL_TYPES.has(type))
	const guardrailVersion = own('guardrail_version', GUARDRAIL_TYPES.has(type))
	return { rest, region, project, guardrail, guardrailVersion }
}

const int = (s: string, what: string) => {
	if (!/^-?\d+$/.test(s.trim())) throw new Error(`${what} must be a whole number`)
	return Number(s.trim())
}

export function ChannelModal({ channel, onClose, onSaved }: { channel?: Channel; onClose: () => void; onSaved: (c: Channel) => void }) {
	const [name, setName] = useState(channel?.name ?? '')
	const [type, setType] = useState<string>(channel?.type ?? 'openai')
	const [baseUrl, setBaseUrl] = useState(channel?.base_url ?? '')
	const [apiKey, setApiKey] = useState('')
	const [models, setModels] = useState((channel?.models ?? []).join('\n'))
	const [priority, setPriority] = useState(String(channel?.priority ?? 0))
	const [weight, setWeight] = useState(String(channel?.weight ?? 1))
	const [modelMap, setModelMap] = useState(formatPairs(channel?.model_map))
	const [initial] = useState(() => splitSettings(channel?.type ?? 'openai', channel?.settings))
	const [settings, setSettings] = useState(Object.keys(initial.rest).length ? JSON.stringify(initial.rest, null, 2) : '')
	const [region, setRegion] = useState(initial.region)
	const [project, setProject] = useState(initial.project)
	const [guardrail, setGuardrail] = useState(initial.guardrail)
	const [guardrailVersion, setGuardrailVersion] = useState(initial.guardrailVersion)

	const keyHint = `${KEY_HINT[type] ? `${KEY_HINT[type]} ` : ''}${channel ? 'Stored encrypted and never shown. Leave empty to keep the current key.' : 'Stored encrypted and never shown again.'}`

	const save = async () => {
		const list = parseList(models)
		if (!list.length) throw new Error('List at least one model')
		const body: Record<string, unknown> = {
			name: name.trim(),
			type,
			base_url: baseUrl.trim(),
			models: list,
			priority: int(priority, 'Priority'),
			weight: int(weight, 'Weight'),
			model_map: parsePairs(modelMap, 'Model map'),
			settings: {
				...parseJsonObject(settings, 'Settings'),
				...(type in REGION_HINT && region.trim() && { region: region.trim() }),
				...(type in PROJECT_HINT && project.trim() && { project: project.trim() }),
				// Each as given: the gateway refuses one without the other, naming the field.
				...(GUARDRAIL_TYPES.has(type) && guardrail.trim() && { guardrail_identifier: guardrail.trim() }),
				...(GUARDRAIL_TYPES.has(type) && guardrailVersion.trim() && { guardrail_version: guardrailVersion.trim() }),
			},
		}
		if (apiKey) body.api_key = apiKey
		else if (!channel) throw new Error('Enter the upstream API key')
		onSaved(await api<Channel>(channel ? 'PATCH' : 'POST', channel ? `/api/channels/${channel.id}` : '/api/channels', body))
	}

	return (
		<FormModal title={channel ? `Edit channel “${channel.name}”` : 'New channel'} submitLabel={channel ? 'Save' : 'Create channel'} onSubmit={save} onClose={onClose} wide>
			{channel && channelOrigin(channel) && <Alert kind="info">{channelOrigin(channel)!.note}</Alert>}
			<div class="grid-2">
				<TextField label="Name" value={name} onValue={setName} required maxLength={200} autoFocus />
				<SelectField label="Type" value={type} onValue={setType} options={CHANNEL_TYPES.map((t) => ({ value: t, label: t }))} />
			</div>
			<TextField
				label="Base URL"
				type="url"
				value={baseUrl}
				onValue={setBaseUrl}
				required
				placeholder={BASE_URL_EXAMPLE[type] ?? 'https://'}
				hint={BASE_URL_HINT[type]}
			/>
			{type === 'vertex' ? (
				// A key file is many lines: shown as pasted, so the operator sees what goes in.
				<TextArea label="API key" value={apiKey} onValue={setApiKey} rows={6} required={!channel} placeholder={channel ? 'Unchanged' : '{ "type": "service_account", … }'} hint={keyHint} />
			) : (
				<TextField
					label="API key"
					type="password"
					value={apiKey}
					onValue={setApiKey}
					// "off" is ignored on password fields: a password manager would offer the console's own password here.
					autoComplete="new-password"
					required={!channel}
					placeholder={channel ? 'Unchanged' : ''}
					hint={keyHint}
				/>
			)}
			{(type in REGION_HINT || type in PROJECT_HINT) && (
				<div class="grid-2">
					{type in PROJECT_HINT && <TextField label="Project" value={project} onValue={setProject} hint={PROJECT_HINT[type]} />}
					<TextField label="Region" value={region} onValue={setRegion} hint={REGION_HINT[type]} />
				</div>
			)}
			{GUARDRAIL_TYPES.has(type) && (
				<div class="grid-2">
					<TextField
						label="Guardrail"
						value={guardrail}
						onValue={setGuardrail}
						hint="Optional. The Amazon Bedrock guardrail applied to every call: its id or ARN. Its trace and stream mode go in Settings (guardrail_trace, guardrail_stream_mode)."
					/>
					<TextField label="Guardrail version" value={guardrailVersion} onValue={setGuardrailVersion} hint='With a guardrail: a version number such as 1, or DRAFT.' />
				</div>
			)}
			<TextArea label="Models" value={models} onValue={setModels} rows={4} hint="One per line (or comma-separated). * matches anything, e.g. gpt-4o*." />
			<div class="grid-2">
				<TextField label="Priority" value={priority} onValue={setPriority} inputMode="numeric" hint="Lower is tried first." />
				<TextField label="Weight" value={weight} onValue={setWeight} inputMode="numeric" hint="Share among channels of equal priority; 0: standby, tried only after every other channel of its priority." />
			</div>
			<TextArea label="Model map" value={modelMap} onValue={setModelMap} rows={3} hint="Optional. public-name = upstream-name, one per line; each public name must also be under Models." />
			<TextArea
				label="Settings"
				value={settings}
				onValue={setSettings}
				rows={3}
				hint='Optional JSON: "timeouts" {first_byte_ms, answer_ms, idle_ms}, "headers", "responses_api" (false: no /responses), "structured_outputs" ("native" or "prompt", Anthropic), "tool_call_ids" ("alnum9", Mistral models), "reasoning_effort" (false: no effort for thinking, OpenAI-compatible), "api_version" (Azure). See the README.'
			/>
		</FormModal>
	)
}
