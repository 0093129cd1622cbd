/**
 * A modal dialog on the native `<dialog>` element: `showModal()` gives focus trapping, Escape to close and an
 * inert background for free. Render it only while open.
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef } from 'preact/hooks'
import { Alert, Button } from './ui'

export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
	const ref = useRef<HTMLDialogElement>(null)
	const id = useId()
	useEffect(() => {
		const d = ref.current
		if (d && !d.open) d.showModal()
		return () => d?.close()
	}, [])
	return (
		<dialog
			ref={ref}
			class={`modal${wide ? ' modal-wide' : ''}`}
			aria-labelledby={id}
			onCancel={(e) => {
				e.preventDefault()
				onClose()
			}}
		>
			<div class="modal-head">
				<h2 id={id}>{title}</h2>
				<button type="button" class="icon-btn" aria-label="Close" title="Close" onClick={onClose}>
					<span aria-hidden="true">×</span>
				</button>
			</div>
			{children}
		</dialog>
	)
}

/** "Are you sure?" with the consequence spelled out; the confirm button names the action. */
export function ConfirmModal(props: { title: string; message: ComponentChildren; confirmLabel: string; busy?: boolean; error?: string; onConfirm: () => void; onClose: () => void }) {
	return (
		<Modal title={props.title} onClose={props.onClose}>
			<div class="modal-body">
				<p>{props.message}</p>
				{props.error && <Alert>{props.error}</Alert>}
			</div>
			<div class="modal-foot">
				<Button onClick={props.onClose}>Cancel</Button>
				<Button variant="danger" busy={props.busy} onClick={props.onConfirm}>
					{props.confirmLabel}
				</Button>
			</div>
		</Modal>
	)
}
