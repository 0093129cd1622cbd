/**
 * Types shared by the mock vendor servers (OpenAI, Anthropic, Gemini).
 * The mocks are deliberately independent of `src/`: they are the yardstick the gateway is measured against.
 * @module
 */

/**
 * A failure to inject. `fault` applies to every request, `faultOnce` to the next one only.
 * - `status`: answer with this HTTP status and a vendor-shaped error body (or `body`), plus `retry-after` (seconds)
 *   and `retry-after-ms` when given.
 * - `cut`: send `afterChunks` stream chunks (or half a JSON body), then end without the terminator;
 *   `abrupt: true` resets the connection instead of ending the body cleanly.
 * - `slow`: wait `firstByteMs` before the headers, then answer normally.
 * - `stall`: send `afterChunks` stream chunks (or half a JSON body), then hold the body open, silent, until the
 *   client goes away (an upstream that stops mid-answer: what idle timeouts are for).
 * - `malformed`: 200 with invalid JSON (non-stream) or one SSE frame whose data is broken JSON (stream): the second
 *   chunk, or the one at index `atChunk` (clamped to the last before the closing ones), the rest following it.
 * - `empty`: 200 with an empty body. `hang`: never answer (until the client goes away).
 * - `midstream`: after `afterChunks` stream chunks, the vendor's in-stream error event (OpenAI `data: {"error":…}`,
 *   Anthropic `event: error` overloaded_error, Gemini `data: {"error":…}`), then the end; a non-stream call gets
 *   the matching HTTP error (500 / 529 / 503) instead. `status` picks another error, as the vendor words the HTTP
 *   error of that status (429: each vendor's rate limit).
 * - `refuse`: stop listening so connections are refused. As `faultOnce` the next connection is accepted and
 *   closed at once (a refusal cannot be counted per request), then the server listens again.
 */
export type Fault =
	| { kind: 'status'; status: number; body?: unknown; retryAfter?: number; retryAfterMs?: number }
	| { kind: 'cut'; afterChunks: number; abrupt?: boolean }
	| { kind: 'slow'; firstByteMs: number }
	| { kind: 'stall'; afterChunks: number }
	| { kind: 'midstream'; afterChunks: number; status?: number }
	| { kind: 'malformed'; atChunk?: number }
	| { kind: 'empty' }
	| { kind: 'hang' }
	| { kind: 'refuse' }

export interface MockOptions {
	/** The only key the mock accepts. */
	apiKey: string
	/** Wait before sending the headers of every response (benchmarks). */
	delayMs?: number
	/** Wait between stream chunks (benchmarks, or to force one chunk per network write). */
	chunkDelayMs?: number
	/** Record requests in `requests` (default true); turn off for long benchmarks. */
	record?: boolean
	/** When set, only these model ids are served; others get the vendor's 404. */
	models?: string[]
	/**
	 * Anthropic and Gemini mocks: their token counters (`/v1/messages/count_tokens`, `:countTokens`) count the tool
	 * definitions too, as the vendors' do (`toolWords`); off, they count the messages' words only, as before.
	 */
	countTools?: boolean
	/** OpenAI mock: refuse tool call ids other than nine letters or digits, as Mistral's API does. */
	alnum9ToolCallIds?: boolean
	/** OpenAI mock: continue a final assistant message marked `prefix: true`, as DeepSeek (`continue`) and Mistral (`echo`:
	 * the answer repeats the prefix first) do; unset, the flag is ignored and the answer is a new one, as OpenAI's. */
	prefix?: 'continue' | 'echo'
	/** OpenAI mock, /v1/audio/speech: an OpenAI-compatible vendor that ignores `stream_format` (plain audio) or refuses it (400). */
	speechStreamFormat?: 'ignore' | 'reject'
}

/** One request as the mock received it. */
export interface RecordedRequest {
	method: string
	path: string
	query: Record<string, string>
	/** Lower-case header names. */
	headers: Record<string, string>
	/** Parsed JSON, the raw text when it is not JSON, multipart fields (files as {filename,type,size}), or undefined. */
	body: unknown
	/** The body's text as it came (not for multipart bodies). */
	text?: string
	/** The parsed multipart body, files with their bytes (to check a relay forwarded them intact). */
	form?: FormData
	at: number
}

export interface RecordedAbort {
	path: string
	at: number
}

/** A running mock vendor server. */
export interface VendorMock {
	/** Base URL to configure as the upstream: OpenAI `…/v1`; Anthropic and Gemini the bare origin. */
	readonly url: string
	readonly port: number
	readonly requests: RecordedRequest[]
	readonly aborts: RecordedAbort[]
	fault: Fault | undefined
	faultOnce: Fault | undefined
	/** Clears requests, aborts and faults. */
	reset(): void
	stop(): Promise<void>
}
