/** Small building blocks: buttons, labelled fields, alerts, badges, page headers, loading and empty states. */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact'
import { useId } from 'preact/hooks'
import { dateTime } from '../lib/format'

type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'type'> & { variant?: 'primary' | 'secondary' | 'danger' | 'ghost'; busy?: boolean; type?: 'button' | 'submit' }

export function Button({ variant = 'secondary', busy, class: cls, type = 'button', disabled, children, ...rest }: ButtonProps) {
	return (
		<button {...rest} type={type} class={`btn btn-${variant}${cls ? ` ${cls}` : ''}`} disabled={Boolean(disabled) || busy} aria-busy={busy ? 'true' : undefined}>
			{busy && <span class="spinner" aria-hidden="true" />}
			{children}
		</button>
	)
}

/** A square button with only an icon: `label` is its accessible name and tooltip. */
export function IconButton({ label, onClick, children, pressed, disabled }: { label: string; onClick: () => void; children: ComponentChildren; pressed?: boolean; disabled?: boolean }) {
	return (
		<button type="button" class="icon-btn" aria-label={label} title={label} onClick={onClick} aria-pressed={pressed === undefined ? undefined : pressed ? 'true' : 'false'} disabled={disabled}>
			{children}
		</button>
	)
}

type InputProps = {
	label: string
	value: string
	onValue: (v: string) => void
	hint?: ComponentChildren
	class?: string
	type?: 'text' | 'password' | 'date' | 'url' | 'search' | 'email'
	name?: string
	required?: boolean
	placeholder?: string
	autoComplete?: string
	autoFocus?: boolean
	autoCapitalize?: 'none' | 'sentences'
	spellcheck?: boolean
	maxLength?: number
	minLength?: number
	min?: string
	max?: string
	inputMode?: 'text' | 'decimal' | 'numeric'
	/** id of a <datalist> with suggestions. */
	list?: string
	onKeyDown?: (e: KeyboardEvent) => void
}

export function TextField({ label, value, onValue, hint, class: cls, type = 'text', list, ...rest }: InputProps) {
	const id = useId()
	// Preact types `type` as a union keyed by each literal (a union-typed prop does not fit) and lack `list`.
	const extra: Record<string, string> = list ? { type, list } : { type }
	return (
		<div class={`field${cls ? ` ${cls}` : ''}`}>
			<label for={id}>{label}</label>
			<input id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} {...extra} />
			{hint && (
				<p class="hint" id={`${id}-hint`}>
					{hint}
				</p>
			)}
		</div>
	)
}

export function TextArea({
	label,
	value,
	onValue,
	hint,
	rows = 4,
	placeholder,
	required,
}: { label: string; value: string; onValue: (v: string) => void; hint?: ComponentChildren; rows?: number; placeholder?: string; required?: boolean }) {
	const id = useId()
	return (
		<div class="field">
			<label for={id}>{label}</label>
			<textarea
				id={id}
				rows={rows}
				value={value}
				onInput={(e) => onValue(e.currentTarget.value)}
				aria-describedby={hint ? `${id}-hint` : undefined}
				spellcheck={false}
				placeholder={placeholder}
				required={required}
			/>
			{hint && (
				<p class="hint" id={`${id}-hint`}>
					{hint}
				</p>
			)}
		</div>
	)
}

export function SelectField<T extends string>({ label, value, onValue, options, hint }: { label: string; value: T; onValue: (v: T) => void; options: Array<{ value: T; label: string }>; hint?: ComponentChildren }) {
	const id = useId()
	return (
		<div class="field">
			<label for={id}>{label}</label>
			<select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value as T)}>
				{options.map((o) => (
					<option key={o.value} value={o.value}>
						{o.label}
					</option>
				))}
			</select>
			{hint && <p class="hint">{hint}</p>}
		</div>
	)
}

export function CheckField({ label, checked, onValue, hint }: { label: string; checked: boolean; onValue: (v: boolean) => void; hint?: ComponentChildren }) {
	const id = useId()
	return (
		<div class="field field-check">
			<input id={id} type="checkbox" checked={checked} onChange={(e) => onValue(e.currentTarget.checked)} />
			<label for={id}>{label}</label>
			{hint && <p class="hint">{hint}</p>}
		</div>
	)
}

/** An error or notice in words; errors are announced to screen readers as they appear. */
export function Alert({ kind = 'error', children }: { kind?: 'error' | 'info' | 'success'; children: ComponentChildren }) {
	return (
		<div class={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
			{children}
		</div>
	)
}

export function Badge({ tone = 'neutral', children }: { tone?: 'neutral' | 'success' | 'danger' | 'warning' | 'info'; children: ComponentChildren }) {
	return <span class={`badge badge-${tone}`}>{children}</span>
}

export function PageHeader({ title, subtitle, actions }: { title: string; subtitle?: ComponentChildren; actions?: ComponentChildren }) {
	return (
		<div class="page-header">
			<div>
				<h1>{title}</h1>
				{subtitle && <p class="lead">{subtitle}</p>}
			</div>
			{actions && <div class="page-actions">{actions}</div>}
		</div>
	)
}

/** A table's date and time: it may break between the two, never inside the date ("2026-11-" / "28 01:34"). */
export function DateTime({ iso }: { iso: string | null | undefined }) {
	const [date, time] = dateTime(iso).split(' ')
	if (!iso || !time) return <>{date}</>
	return (
		<time dateTime={iso}>
			<span class="nowrap">{date}</span> <span class="nowrap">{time}</span>
		</time>
	)
}

/**
 * An endpoint path that may break before each / and : (a table column no wider than its longest piece, so that a
 * long Gemini path such as /v1beta/models/{model}:streamGenerateContent does not push the next columns out of view).
 */
export function Endpoint({ path }: { path: string }) {
	return <code class="endpoint">{path.split(/(?=[/:])/).flatMap((piece, i) => (i ? [<wbr key={i} />, piece] : [piece]))}</code>
}

export const Loading = ({ label = 'Loading…' }: { label?: string }) => (
	<p class="loading" role="status">
		<span class="spinner" aria-hidden="true" /> {label}
	</p>
)

export const Empty = ({ children }: { children: ComponentChildren }) => <div class="empty">{children}</div>

export function statusTone(status: string): 'success' | 'danger' | 'warning' | 'neutral' {
	if (status === 'active' || status === 'enabled') return 'success'
	if (status === 'expired' || status === 'exhausted' || status === 'limit reached') return 'warning'
	if (status === 'disabled' || status === 'deleted') return 'danger'
	return 'neutral'
}
