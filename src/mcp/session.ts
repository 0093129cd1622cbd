/**
 * One MCP client session per server per request, over the Streamable HTTP transport of the official SDK
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http): connect (initialize),
 * list the tools the request enables, call them. Every failure becomes text the model can read, never an exception:
 * an unreachable server is a failed session, a failing call an `isError` outcome (MCP: "errors that originate from
 * the tool SHOULD be reported inside the result object"). The authorization token goes only into this server's
 * request headers; it is never logged and never part of an error text.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { TextPart } from '../core/ir'
import type { FetchGuard } from '../lib/safe-fetch'
import type { McpLimits } from './config'
import { guardedFetch } from './guard'
import type { McpServerSpec } from './request'

export type McpTool = { server: string; name: string; description?: string; inputSchema: Record<string, unknown> }

/** What a tool call produced, as the model and the client will see it. */
export type ToolOutcome = { isError: boolean; content: TextPart[] }

export type McpSession = {
	server: string
	/** The server's tools the request enables. */
	tools: McpTool[]
	call(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>
	close(): Promise<void>
}

/** A server that could not be reached or listed, with the reason in words. */
export type McpFailure = { server: string; error: string }

const CLIENT_INFO = { name: 'switchboard', version: '0.1.0' }

/**
 * The SDK (and the schema library under it) weighs ~25 MB of memory once loaded: loaded with the first request that
 * names an MCP server, not by every gateway at start.
 */
let sdk: Promise<[typeof import('@modelcontextprotocol/sdk/client/index.js'), typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')]> | undefined
const loadSdk = () => (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/client/streamableHttp.js')]))
/** A server listing more pages than this is cut (a bound on a misbehaving server, not a real limit). */
const MAX_PAGES = 20
/** The session-ending DELETE is a courtesy (spec: clients SHOULD send it); it must not hold the request up. */
const CLOSE_MS = 2_000

const reason = (e: unknown): string => (e instanceof Error ? e.message : String(e)).slice(0, 500)

/** MCP content blocks → text for the model: text as is, resources by their text or URI, media by a placeholder. */
function toText(content: unknown, structured: unknown): TextPart[] {
	const out: TextPart[] = []
	for (const c of Array.isArray(content) ? content : []) {
		if (!c || typeof c !== 'object') continue
		const b = c as Record<string, unknown>
		if (b.type === 'text' && typeof b.text === 'string') out.push({ type: 'text', text: b.text })
		else if (b.type === 'resource' && b.resource && typeof b.resource === 'object') {
			const r = b.resource as Record<string, unknown>
			out.push({ type: 'text', text: typeof r.text === 'string' ? r.text : `[resource ${String(r.uri ?? '')}]` })
		} else if (b.type === 'resource_link') out.push({ type: 'text', text: `[resource ${String(b.uri ?? '')}]` })
		else if (b.type === 'image' || b.type === 'audio') out.push({ type: 'text', text: `[${b.type} ${String(b.mimeType ?? '')} omitted]` })
	}
	if (!out.length && structured !== undefined) out.push({ type: 'text', text: JSON.stringify(structured) })
	return out
}

/**
 * Connects to one server and lists its enabled tools, within `limits.connectTimeoutMs` per request.
 * @returns the session, or why the server is unavailable
 */
export async function openSession(spec: McpServerSpec, guard: FetchGuard, limits: McpLimits, signal: AbortSignal): Promise<McpSession | McpFailure> {
	// Each request runs with its own abort controller as the async context, so that the HTTP response the SDK fetches
	// for it can fail it at once when it goes over the size cap (the SDK would otherwise wait for the timeout).
	const owner = new AsyncLocalStorage<AbortController>()
	const tracked = async <T>(outer: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> => {
		const ctl = new AbortController()
		const onOuter = () => ctl.abort(outer.reason)
		if (outer.aborted) onOuter()
		else outer.addEventListener('abort', onOuter, { once: true })
		try {
			return await owner.run(ctl, () => fn(ctl.signal))
		} finally {
			outer.removeEventListener('abort', onOuter)
		}
	}
	const ownerOf = () => {
		const ctl = owner.getStore()
		return ctl && ((e: Error) => ctl.abort(e))
	}
	const [{ Client }, { StreamableHTTPClientTransport }] = await loadSdk()
	const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
		fetch: guardedFetch(guard, limits.maxResponseBytes, ownerOf),
		requestInit: spec.token ? { headers: { authorization: `Bearer ${spec.token}` } } : undefined,
		// One request's session: a dropped notification stream is not worth reconnecting for.
		reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
	})
	const client = new Client(CLIENT_INFO, { capabilities: {} })
	const close = async () => {
		await Promise.race([transport.terminateSession().catch(() => undefined), Bun.sleep(CLOSE_MS)])
		await client.close().catch(() => undefined)
	}
	const timeout = limits.connectTimeoutMs
	const tools: McpTool[] = []
	try {
		await tracked(signal, (s) => client.connect(transport, { timeout, signal: s }))
		let cursor: string | undefined
		for (let page = 0; page < MAX_PAGES; page++) {
			const r = await tracked(signal, (s) => client.listTools(cursor ? { cursor } : undefined, { timeout, signal: s }))
			for (const t of r.tools)
				if (spec.enabled(t.name))
					tools.push({ server: spec.name, name: t.name, ...(t.description && { description: t.description }), inputSchema: t.inputSchema as Record<string, unknown> })
			cursor = r.nextCursor
			if (!cursor) break
		}
	} catch (e) {
		void close()
		return { server: spec.name, error: `cannot use MCP server "${spec.name}": ${reason(e)}` }
	}
	return {
		server: spec.name,
		tools,
		async call(tool, input, callSignal) {
			try {
				const r = await tracked(callSignal, (s) => client.callTool({ name: tool, arguments: input }, undefined, { timeout: limits.callTimeoutMs, signal: s }))
				return { isError: r.isError === true, content: toText(r.content, r.structuredContent) }
			} catch (e) {
				return { isError: true, content: [{ type: 'text', text: `MCP tool "${tool}" on server "${spec.name}" failed: ${reason(e)}` }] }
			}
		},
		close,
	}
}

export const isFailure = (s: McpSession | McpFailure): s is McpFailure => 'error' in s
