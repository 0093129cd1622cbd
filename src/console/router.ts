/** A tiny history-API router: routes are the path below /console (the server answers every one with the shell). */
import { useEffect, useState } from 'preact/hooks'

export const BASE = '/console'

const listeners = new Set<() => void>()

/** The current route, e.g. '/tokens' for /console/tokens (and '/' for /console). */
export function currentRoute(): string {
	const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/'
	return p.replace(/\/+$/, '') || '/'
}

export function navigate(route: string, replace = false) {
	const url = BASE + (route === '/' ? '' : route)
	if (replace) history.replaceState(null, '', url)
	else history.pushState(null, '', url)
	for (const l of listeners) l()
	window.scrollTo(0, 0)
}

export function useRoute(): string {
	const [route, setRoute] = useState(currentRoute)
	useEffect(() => {
		const update = () => setRoute(currentRoute())
		listeners.add(update)
		window.addEventListener('popstate', update)
		return () => {
			listeners.delete(update)
			window.removeEventListener('popstate', update)
		}
	}, [])
	return route
}

/** Click handler for in-app links: ordinary clicks navigate without a reload; modified clicks open normally. */
export function linkClick(route: string) {
	return (e: MouseEvent) => {
		if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
		e.preventDefault()
		navigate(route)
	}
}
