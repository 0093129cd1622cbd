/**
 * A modal dialog on the native `<dialog>` element: `showModal()` gives focus trapping, Escape to close and an
 * inert background for free. Render it only while open. Closing puts focus back on what opened it.
 */
import type { ComponentChildren } from 'preact'
import { useId, useLayoutEffect, useRef } from 'preact/hooks'
import { useAction } from '../hooks'
import { Alert, Button } from './ui'

export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
	const ref = useRef<HTMLDialogElement>(null)
	const id = useId()
	// Layout effect: its cleanup runs before the dialog leaves the DOM (a passive one runs after paint, when focus has
	// already dropped to <body>), and the opener is read before anything else can take focus.
	useLayoutEffect(() => {
		// Still the opener: showModal has not moved focus yet. When one dialog replaces another ("Token created"
		// after "Create token"), the first has already given focus back to its own opener.
		const opener = document.activeElement
		const d = ref.current
		if (d && !d.open) d.showModal()
		return () => {
			d?.close()
			// The dialog leaves the DOM next, so the browser would drop focus to <body> (WCAG 2.4.3): back to the
			// opener, or to the page when the opener is gone (e.g. the empty list's "Create your first token").
			if (opener instanceof HTMLElement && opener !== document.body && opener.isConnected) opener.focus()
			else document.getElementById('main')?.focus({ preventScroll: true })
		}
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

/** Cancel, then the one button that names the dialog's action. */
function ModalFoot({ onCancel, children }: { onCancel: () => void; children: ComponentChildren }) {
	return (
		<div class="modal-foot">
			<Button onClick={onCancel}>Cancel</Button>
			{children}
		</div>
	)
}

type FormModalProps = {
	title: string
	/** The submit button's text: the action, e.g. "Create token". */
	submitLabel: string
	/** Checks the fields and calls the server; a throw is shown in words above the fields and the dialog stays. */
	onSubmit: () => Promise<unknown>
	onClose: () => void
	/** Shown above the error (context such as the current balance). */
	intro?: ComponentChildren
	wide?: boolean
	children: ComponentChildren
}

/** A dialog around a form: its fields, the failure in words, Cancel and the submit button (busy while it runs). */
export function FormModal({ title, submitLabel, onSubmit, onClose, intro, wide, children }: FormModalProps) {
	const action = useAction()
	return (
		<Modal title={title} onClose={onClose} wide={wide}>
			{/* A submit the browser's own checks stop (a date before its minimum) says why itself: an earlier alert about
			    another field would stay, wrong. `invalid` does not bubble, so it is caught on the way down. */}
			<form onSubmit={action.submit(onSubmit)} onInvalidCapture={action.clearError}>
				<div class="modal-body stack">
					{intro}
					{action.error && <Alert>{action.error}</Alert>}
					{children}
				</div>
				<ModalFoot onCancel={onClose}>
					<Button type="submit" variant="primary" busy={action.busy}>
						{submitLabel}
					</Button>
				</ModalFoot>
			</form>
		</Modal>
	)
}

/** "Are you sure?" with the consequence spelled out; the confirm button names the action. */
export function ConfirmModal(props: { title: string; message: ComponentChildren; confirmLabel: string; onConfirm: () => Promise<unknown>; onClose: () => void }) {
	const action = useAction()
	return (
		<Modal title={props.title} onClose={props.onClose}>
			<div class="modal-body">
				<p>{props.message}</p>
				{action.error && <Alert>{action.error}</Alert>}
			</div>
			<ModalFoot onCancel={props.onClose}>
				<Button variant="danger" busy={action.busy} onClick={() => action.run(props.onConfirm)}>
					{props.confirmLabel}
				</Button>
			</ModalFoot>
		</Modal>
	)
}
