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
	const [settings, setSettings] = useState(channel?.settings && Object.keys(channel.settings).length ? JSON.stringify(channel.settings, null, 2) : '')

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
			settings: parseJsonObject(settings, 'Settings'),
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
				hint={type === 'openai' ? 'Includes /v1.' : type === 'anthropic' ? 'Without /v1.' : type === 'gemini' ? 'The host; /v1beta is added.' : type === 'azure' ? 'The resource endpoint (deployments are the upstream model names), or …/openai/v1 for the v1 API.' : undefined}
			/>
			<TextField
				label="API key"
				type="password"
				value={apiKey}
				onValue={setApiKey}
				// "off" is ignored on password fields: a password manager would offer the console's own password here.
				autoComplete="new-password"
				required={!channel}
				placeholder={channel ? 'Unchanged' : ''}
				hint={channel ? 'Stored encrypted and never shown. Leave empty to keep the current key.' : 'Stored encrypted and never shown again.'}
			/>
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
				hint='Optional JSON: "timeouts" {first_byte_ms, idle_ms}, "headers", "responses_api" (false: no /responses), "structured_outputs" ("native" or "prompt", Anthropic), "tool_call_ids" ("alnum9", Mistral models), "reasoning_effort" (false: no effort for thinking, OpenAI-compatible), "api_version" (Azure). See the README.'
			/>
		</FormModal>
	)
}
