/** Administration → Channels: upstreams, their routing state, a live Test, create/edit and enable/disable. */
import { useState } from 'preact/hooks'
import { ApiError, api, messageOf } from '../api'
import { AddButton, EditButton, EnableButton } from '../components/actions'
import { DataTable } from '../components/data-table'
import { PlayIcon } from '../components/icons'
import { Badge, Button, PageHeader, statusTone, TextField } from '../components/ui'
import { useAction, useDialogs, useLoad } from '../hooks'
import { channelOrigin } from '../lib/channel-source'
import { dateTime, isolated, latency } from '../lib/format'
import { useSession } from '../session'
import type { Channel, ChannelHealth, ChannelTest } from '../types'
import { ChannelModal } from './channel-form'

/** `askModel`: the channel lists only patterns that no priced model matches, so the server needs the model to test named. */
type TestState = { busy: true } | { result: ChannelTest } | { error: string; askModel?: boolean }

/** The circuit breaker in words: closed = healthy, open = cooling down after failures, half_open = probing. */
function Health({ h }: { h: ChannelHealth }) {
	const failures = h.consecutive_failures ?? 0
	const error = h.last_error ? <span class="muted small vendor-message"> Last error: {h.last_error}</span> : null
	if (h.state === 'open')
		return (
			<span>
				<Badge tone="warning">cooling down{h.open_until ? ` until ${dateTime(h.open_until)}` : ''}</Badge>
				{error}
			</span>
		)
	if (h.state === 'half_open')
		return (
			<span>
				<Badge tone="warning">probing</Badge>
				{error}
			</span>
		)
	if (h.state === 'closed') return failures > 0 ? <span class="muted small">{failures} recent failure{failures === 1 ? '' : 's'}</span> : <Badge tone="success">healthy</Badge>
	return <Badge>{h.state}</Badge>
}

/** The model to test, asked for when the server cannot pick one (the API's `{"model": "…"}`, which a page has no other way to send). */
function ModelToTest({ onTest }: { onTest: (model: string) => void }) {
	const [model, setModel] = useState('')
	return (
		<form
			class="test-model"
			onSubmit={(e) => {
				e.preventDefault()
				if (model.trim()) onTest(model.trim())
			}}
		>
			<TextField label="Model to test" value={model} onValue={setModel} required spellcheck={false} autoCapitalize="none" />
			<Button class="btn-sm" type="submit">
				Test with this model
			</Button>
		</form>
	)
}

/**
 * Where a channel came from ("from GATEWAY_CONFIG", "from AWS_BEARER_TOKEN_BEDROCK or …"): a variable's name breaks
 * after its underscores, never inside a word (the row header breaks anywhere, for names people type).
 */
function Origin({ label }: { label: string }) {
	return <div class="muted small origin">{label.split(/(?<=_)/).flatMap((piece, i) => (i ? [<wbr key={i} />, piece] : [piece]))}</div>
}

function TestResult({ t, onTest }: { t: TestState; onTest: (model: string) => void }) {
	if ('busy' in t)
		return (
			<p class="test-result" role="status">
				<span class="spinner" aria-hidden="true" /> Testing…
			</p>
		)
	// Nothing was called: the server's words ask for a request field, so say it as the page asks for it.
	if ('error' in t && t.askModel)
		return (
			<>
				<p class="test-result" role="status">
					No priced model matches this channel’s patterns: name the model to test.
				</p>
				<ModelToTest onTest={onTest} />
			</>
		)
	if ('error' in t)
		return (
			<p class="test-result bad" role="status">
				Test failed: {t.error}
			</p>
		)
	const r = t.result
	// A channel type with no chat endpoint (rerank, video…): no call was made, so nothing failed.
	if (r.testable === false)
		return (
			<p class="test-result" role="status">
				Not testable by chat: {r.message}
			</p>
		)
	return (
		<p class={`test-result ${r.ok ? 'good' : 'bad'}`} role="status">
			{/* Status 0: the upstream never answered (refused, unresolvable, timed out): there is no HTTP status to show. */}
			{r.ok ? 'Works' : 'Failed'}: {r.status === 0 ? `no answer after ${latency(r.latency_ms)}` : `HTTP ${r.status} in ${latency(r.latency_ms)}`} with <code>{r.model}</code>
			{r.message ? ` — ${r.message}` : ''}
		</p>
	)
}

export function AdminChannels() {
	const { toast } = useSession()
	const list = useLoad(() => api<{ data: Channel[] }>('GET', '/api/channels'), [])
	const [tests, setTests] = useState<Record<number, TestState>>({})
	const dialog = useDialogs<Channel | 'new'>(list.reload)
	const toggle = useAction()

	const test = async (c: Channel, model?: string) => {
		setTests((t) => ({ ...t, [c.id]: { busy: true } }))
		try {
			const result = await api<ChannelTest>('POST', `/api/channels/${c.id}/test`, model ? { model } : undefined)
			setTests((t) => ({ ...t, [c.id]: { result } }))
		} catch (e) {
			// A bare 404 means the route itself is missing (an older server), not the channel.
			const missing = e instanceof ApiError && e.status === 404 && e.message === 'Not found'
			const askModel = e instanceof ApiError && e.status === 400 && e.param === 'model'
			setTests((t) => ({ ...t, [c.id]: { error: missing ? 'this server does not offer channel tests (HTTP 404)' : messageOf(e), askModel } }))
		}
	}
	const setEnabled = (c: Channel, enabled: boolean) =>
		toggle.run(async () => {
			await api('POST', `/api/channels/${c.id}/${enabled ? 'enable' : 'disable'}`)
			toast(`${enabled ? 'Enabled' : 'Disabled'} “${isolated(c.name)}”`)
			list.reload()
		})

	return (
		<>
			<PageHeader
				title="Channels"
				subtitle="Upstream providers that serve the models. Lower priority is tried first; a failing channel cools down."
				actions={<AddButton label="New channel" onClick={() => dialog.show('new')} />}
			/>
			<DataTable
				loaded={list}
				label="Channels"
				columns={['Name', 'Type', 'Models', 'Priority / weight', 'Status']}
				actions
				errors={[toggle.error]}
				empty="No channels yet. Add one to start serving models."
				row={(c) => (
					<tr key={c.id} data-channel={c.name}>
						<th scope="row" data-label="Name">
							{c.name}
							<div class="muted small">{c.base_url}</div>
							{channelOrigin(c) && <Origin label={channelOrigin(c)!.label} />}
						</th>
						<td data-label="Type">
							<Badge>{c.type}</Badge>
						</td>
						<td data-label="Models">
							<ul class="chips">
								{c.models.slice(0, 6).map((m) => (
									<li key={m} class="chip">
										{m}
									</li>
								))}
								{c.models.length > 6 && <li class="chip">+{c.models.length - 6} more</li>}
							</ul>
						</td>
						<td data-label="Priority / weight">
							{c.priority} / {c.weight}
							{c.weight === 0 && <div class="muted small">standby: only after the others of its priority</div>}
						</td>
						<td data-label="Status">
							<div class="stack-sm">
								<span>
									<Badge tone={statusTone(c.status)}>{c.status}</Badge>
									{c.disabled_reason && <span class="muted small vendor-message"> {c.disabled_reason}</span>}
								</span>
								{c.health && <Health h={c.health} />}
								{tests[c.id] && <TestResult t={tests[c.id]!} onTest={(model) => test(c, model)} />}
							</div>
						</td>
						<td class="actions">
							<Button class="btn-sm" onClick={() => test(c)} busy={Boolean(tests[c.id] && 'busy' in tests[c.id]!)} aria-label={`Test ${c.name}`}>
								<PlayIcon size={14} /> Test
							</Button>
							<EnableButton name={c.name} enabled={c.status === 'enabled'} onToggle={(on) => setEnabled(c, on)} />
							<EditButton name={c.name} onClick={() => dialog.show(c)} />
						</td>
					</tr>
				)}
			/>
			{dialog.open && (
				<ChannelModal
					channel={dialog.open === 'new' ? undefined : dialog.open}
					onClose={dialog.close}
					onSaved={(c) => dialog.done(`Saved “${isolated(c.name)}”`)}
				/>
			)}
		</>
	)
}
