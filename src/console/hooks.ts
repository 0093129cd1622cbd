/** Data loading for pages: one hook that tracks loading, the error in words, and a reload. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { messageOf } from './api'

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
