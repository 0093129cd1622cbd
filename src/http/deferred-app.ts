/**
 * The routes few gateways are asked for (task APIs, uploads, batches, Gemini's side APIs, the WebSocket APIs…,
 * src/app-deferred.ts) in an Elysia app of their own, built at the first request the main app has no route for, and
 * serving every such request after it. Until then their modules are not loaded at all: 77 source files and 96 routes
 * less in memory, which the collector's allowance multiplies (idle RSS ~5 MB lower, peaks 4–9 MB lower in the bench's
 * chat and messages scenarios; bench/README, fortieth VM). The first such request waits for the import (tens of
 * milliseconds).
 * @module
 */
import type { AnyElysia } from 'elysia'

export type DeferredApp = {
	/** Whether a path may be one of its routes': only those load it (a scanner's or a mistyped path gets its 404 at once). */
	serves(path: string): boolean
	/** Serves a request the main app has no route for (its 404 when the deferred routes have none either). */
	handle(request: Request): Promise<Response>
	/** Whether it was built (tests). */
	readonly built: boolean
}

/**
 * `build` runs once, at the first request on a path `paths` matches (a superset of the routes' paths, which a test
 * holds to the routes); when it fails, the next request tries again.
 */
export function deferredApp(paths: RegExp, build: () => Promise<AnyElysia>): DeferredApp {
	let app: Promise<AnyElysia> | undefined
	let built = false
	return {
		serves: (path) => paths.test(path),
		handle(request) {
			app ??= build().then(
				(a) => {
					built = true
					return a
				},
				(e) => {
					app = undefined
					throw e
				},
			)
			return app.then((a) => a.handle(request))
		},
		get built() {
			return built
		},
	}
}
