/**
 * The MCP part of a request, validated the way the MCP connector documents it
 * (https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector): `mcp_servers: [{type:'url', url, name,
 * authorization_token?}]`, and which tools of each server the model may use. Two versions, named by the
 * `anthropic-beta` header:
 * - `mcp-client-2025-11-20`: one `{type:'mcp_toolset', mcp_server_name, default_config?, configs?}` entry in `tools`
 *   per server (every server must have exactly one); a tool is enabled by `configs[tool].enabled`, else
 *   `default_config.enabled`, else true;
 * - `mcp-client-2025-04-04` (deprecated): `tool_configuration: {enabled?, allowed_tools?}` on the server entry.
 * Without the header the version is inferred (toolsets present → the current one). `defer_loading` asks for tool
 * search, which the gateway does not run: such tools are offered like the others.
 * A bad entry is a 400 whose message starts with its path, as the Messages API words validation errors.
 * @module
 */
import { at, invalid, isObject, type Json } from '../protocols/anthropic-messages/check'

export const BETA_CURRENT = 'mcp-client-2025-11-20'
export const BETA_DEPRECATED = 'mcp-client-2025-04-04'

/** More servers than this in one request is refused (each one is a connection the gateway holds open). */
export const MAX_SERVERS = 20

export type McpServerSpec = {
	name: string
	url: string
	/** Sent as `Authorization: Bearer …` to this server only; never logged or stored. */
	token?: string
	/** Whether the model may use the tool of this name. */
	enabled(tool: string): boolean
}

export type McpSpec = { version: typeof BETA_CURRENT | typeof BETA_DEPRECATED; servers: McpServerSpec[] }

const isToolset = (t: unknown): t is Json => isObject(t) && t.type === 'mcp_toolset'

/** Whether the body asks for MCP at all (`mcp_servers`, or an `mcp_toolset` in `tools`). */
export function wantsMcp(body: Json): boolean {
	return body.mcp_servers !== undefined || (Array.isArray(body.tools) && body.tools.some(isToolset))
}

function optBool(o: Json, key: string, path: string): boolean | undefined {
	const v = o[key]
	if (v === undefined || v === null) return undefined
	if (typeof v !== 'boolean') throw invalid(at(path, key), 'Input should be a valid boolean')
	return v
}

function optObj(o: Json, key: string, path: string): Json | undefined {
	const v = o[key]
	if (v === undefined || v === null) return undefined
	if (!isObject(v)) throw invalid(at(path, key), 'Input should be a valid dictionary')
	return v
}

function reqStr(o: Json, key: string, path: string): string {
	const v = o[key]
	if (v === undefined || v === null) throw invalid(at(path, key), 'Field required')
	if (typeof v !== 'string') throw invalid(at(path, key), 'Input should be a valid string')
	if (!v) throw invalid(at(path, key), 'String should have at least 1 character')
	return v
}

/** The 2025-04-04 `tool_configuration` as a filter. */
function legacyFilter(cfg: Json | undefined, path: string): (tool: string) => boolean {
	if (!cfg) return () => true
	const enabled = optBool(cfg, 'enabled', path) ?? true
	const list = cfg.allowed_tools
	if (list !== undefined && list !== null && !(Array.isArray(list) && list.every((x) => typeof x === 'string')))
		throw invalid(at(path, 'allowed_tools'), 'Input should be a valid list of strings')
	const allowed = Array.isArray(list) ? new Set(list as string[]) : undefined
	return (tool) => enabled && (!allowed || allowed.has(tool))
}

/** An `mcp_toolset` as a filter: per-tool config, then the default, then enabled. */
function toolsetFilter(ts: Json, path: string): (tool: string) => boolean {
	const def = optObj(ts, 'default_config', path)
	const defEnabled = def ? optBool(def, 'enabled', at(path, 'default_config')) : undefined
	const configs = optObj(ts, 'configs', path) ?? {}
	const per = new Map<string, boolean>()
	for (const [tool, c] of Object.entries(configs)) {
		const cp = at(at(path, 'configs'), tool)
		if (!isObject(c)) throw invalid(cp, 'Input should be a valid dictionary')
		const e = optBool(c, 'enabled', cp)
		optBool(c, 'defer_loading', cp)
		if (e !== undefined) per.set(tool, e)
	}
	return (tool) => per.get(tool) ?? defEnabled ?? true
}

function versionOf(beta: string | null, hasToolsets: boolean): McpSpec['version'] {
	const betas = (beta ?? '').split(',').map((s) => s.trim())
	if (betas.includes(BETA_CURRENT)) return BETA_CURRENT
	if (betas.includes(BETA_DEPRECATED)) return BETA_DEPRECATED
	return hasToolsets ? BETA_CURRENT : BETA_DEPRECATED
}

/**
 * Reads and validates `mcp_servers` and the toolsets of a request body.
 * @throws GatewayError('invalid_request') naming the bad entry, e.g. `mcp_servers.1.url: …`
 */
export function parseMcp(body: Json, beta: string | null): McpSpec {
	const tools = Array.isArray(body.tools) ? body.tools : []
	const toolsets = tools.map((t, i) => ({ t, i })).filter((x): x is { t: Json; i: number } => isToolset(x.t))
	const version = versionOf(beta, toolsets.length > 0)
	const raw = body.mcp_servers ?? []
	if (!Array.isArray(raw)) throw invalid('mcp_servers', 'Input should be a valid list')
	if (raw.length > MAX_SERVERS) throw invalid('mcp_servers', `List should have at most ${MAX_SERVERS} items`)

	const servers: Array<Omit<McpServerSpec, 'enabled'> & { path: string; legacy?: Json }> = []
	raw.forEach((s, i) => {
		const p = at('mcp_servers', i)
		if (!isObject(s)) throw invalid(p, 'Input should be a valid dictionary')
		if (s.type !== 'url') throw invalid(at(p, 'type'), "Input should be 'url'")
		const url = reqStr(s, 'url', p)
		let parsed: URL | undefined
		try {
			parsed = new URL(url)
		} catch {
			parsed = undefined
		}
		if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw invalid(at(p, 'url'), 'must be an http(s) URL')
		const name = reqStr(s, 'name', p)
		if (servers.some((x) => x.name === name)) throw invalid(at(p, 'name'), `MCP server name "${name}" is used more than once`)
		const token = s.authorization_token
		if (token !== undefined && token !== null && typeof token !== 'string') throw invalid(at(p, 'authorization_token'), 'Input should be a valid string')
		const legacy = optObj(s, 'tool_configuration', p)
		if (legacy && version === BETA_CURRENT)
			throw invalid(at(p, 'tool_configuration'), `not supported with ${BETA_CURRENT}; configure the server's tools with an mcp_toolset in tools`)
		servers.push({ name, url, path: p, ...(typeof token === 'string' && token && { token }), ...(legacy && { legacy }) })
	})

	const filters = new Map<string, (tool: string) => boolean>()
	for (const { t, i } of toolsets) {
		const p = at('tools', i)
		if (version === BETA_DEPRECATED) throw invalid(p, `mcp_toolset requires the anthropic-beta header ${BETA_CURRENT}`)
		const name = reqStr(t, 'mcp_server_name', p)
		if (!servers.some((s) => s.name === name)) throw invalid(at(p, 'mcp_server_name'), `no mcp_servers entry is named "${name}"`)
		if (filters.has(name)) throw invalid(at(p, 'mcp_server_name'), `MCP server "${name}" already has an mcp_toolset`)
		filters.set(name, toolsetFilter(t, p))
	}
	return {
		version,
		servers: servers.map((s) => {
			let enabled = filters.get(s.name)
			if (!enabled && version === BETA_CURRENT) throw invalid(s.path, `MCP server "${s.name}" must be referenced by exactly one mcp_toolset in tools`)
			enabled ??= legacyFilter(s.legacy, at(s.path, 'tool_configuration'))
			const out: McpServerSpec = { name: s.name, url: s.url, enabled }
			if (s.token) out.token = s.token
			return out
		}),
	}
}

