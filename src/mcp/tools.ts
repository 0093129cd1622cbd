/**
 * MCP tools as the model sees them. Each gets a name of its own, `mcp__<server>__<tool>`, kept within what every
 * vendor accepts for a function name (OpenAI ^[a-zA-Z0-9_-]{1,64}$; Gemini also starts with a letter or `_`), and
 * made unique against the caller's tools and each other, so a model's call is always attributable: an MCP tool
 * (run here) or one of the caller's (returned to the caller).
 * @module
 */
import type { Tool } from '../core/ir'
import type { McpTool } from './session'

const MAX_NAME = 64

const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_')

/** The name an MCP tool has for the model before collisions are resolved (also for tools of earlier turns). */
export const baseName = (server: string, tool: string): string => `mcp__${clean(server)}__${clean(tool)}`.slice(0, MAX_NAME)

export type McpRef = { server: string; tool: string }

export type ToolNames = {
	/** The MCP tools as canonical tools, to offer next to the caller's. */
	tools: Tool[]
	/** The MCP tool a model-facing name stands for; undefined for the caller's tools. */
	resolve(name: string): McpRef | undefined
	/** The model-facing name of a server's tool (for MCP calls replayed from earlier turns). */
	nameOf(server: string, tool: string): string
}

/**
 * Names every MCP tool for the model.
 * @example nameTools([{ server: 'wx', name: 'get.weather', inputSchema: {} }], []).tools[0].name === 'mcp__wx__get_weather'
 */
export function nameTools(mcp: McpTool[], callerTools: Tool[]): ToolNames {
	const used = new Set(callerTools.map((t) => t.name))
	const byName = new Map<string, McpRef>()
	const byRef = new Map<string, string>()
	const tools: Tool[] = []
	const key = (server: string, tool: string) => JSON.stringify([server, tool])
	for (const t of mcp) {
		let name = baseName(t.server, t.name)
		for (let n = 2; used.has(name); n++) name = `${baseName(t.server, t.name).slice(0, MAX_NAME - String(n).length - 1)}_${n}`
		used.add(name)
		byName.set(name, { server: t.server, tool: t.name })
		byRef.set(key(t.server, t.name), name)
		const schema = t.inputSchema.type === 'object' ? t.inputSchema : { type: 'object', properties: {} }
		tools.push({ name, parameters: schema, ...(t.description && { description: t.description }) })
	}
	return {
		tools,
		resolve: (name) => byName.get(name),
		nameOf: (server, tool) => byRef.get(key(server, tool)) ?? baseName(server, tool),
	}
}
