/** Page state hooks: data loading, user actions that call the server, and which dialog is open. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { messageOf } from './api'
import { useSession } from './session'

export type Loaded<T> = { data: T | undefined; error: string | undefined; loading: boolean; reload: () => void }

/** Runs `load` when `deps` change; a slower earlier call never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
	const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true })
	const seq = useRef(0)
	const run = useCallback(() => {
		const n = ++seq.current
		setState((s) => ({ ...s, loading: true, error: undefined }))
		load().then(
			(data) => n === seq.current && setState({ data, loading: false }),
			(e) => n === seq.current && setState((s) => ({ data: s.data, error: messageOf(e), loading: false })),
		)
	}, deps)
	useEffect(run, [run])
	return { data: state.data, error: state.error, loading: state.loading, reload: run }
}

export type Action = {
	busy: boolean
	error: string | undefined
	clearError: () => void
	/** Runs `task`; resolves to false (with `error` set) when it threw. */
	run: (task: () => unknown) => Promise<boolean>
	/** The same as a form's submit handler (the browser's own submission is prevented). */
	submit: (task: () => unknown) => (e: Event) => Promise<boolean>
}

/**
 * One user action that calls the server: `busy` while it runs, its failure in words in `error`. Input checks
 * that throw inside `task` are reported the same way as refusals from the server.
 */
export function useAction(): Action {
	const [busy, setBusy] = useState(false)
	const [error, setError] = useState<string>()
	// A dialog usually closes when its task succeeds: its state is then left alone.
	const mounted = useRef(true)
	useEffect(
		() => () => {
			mounted.current = false
		},
		[],
	)
	const run = async (task: () => unknown) => {
		setError(undefined)
		setBusy(true)
		try {
			await task()
			return true
		} catch (e) {
			if (mounted.current) setError(messageOf(e))
			return false
		} finally {
			if (mounted.current) setBusy(false)
		}
	}
	const submit = (task: () => unknown) => (e: Event) => {
		e.preventDefault()
		return run(task)
	}
	return { busy, error, clearError: () => setError(undefined), run, submit }
}

export type Dialogs<D> = {
	/** The open dialog, if any (a page shows at most one). */
	open: D | undefined
	show: (d: D) => void
	close: () => void
	/** After a dialog's change went through: closes it, says so in a toast (when given) and reloads the page's data. */
	done: (message?: string) => void
}

/** Which dialog of a page is open; `reload` re-reads what the dialogs change. */
export function useDialogs<D>(reload: () => void): Dialogs<D> {
	const { toast } = useSession()
	const [open, setOpen] = useState<D>()
	const close = () => setOpen(undefined)
	const done = (message?: string) => {
		close()
		if (message) toast(message)
		reload()
	}
	return { open, show: setOpen, close, done }
}
