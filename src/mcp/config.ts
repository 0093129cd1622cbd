/**
 * Bounds of the gateway's MCP client, from the environment (read per request from `env.vars`, so a test app can set
 * them): rounds of model calls per request, time to connect and list a server's tools, time per tool call, and the
 * largest HTTP body an MCP server may send back.
 * @module
 */

export type McpLimits = {
	/** Model calls per request (MCP_MAX_ROUNDS); on the last one, MCP calls still run and the answer stops with pause_turn. */
	maxRounds: number
	/** Connect, initialize and list tools, per server (MCP_CONNECT_TIMEOUT_MS). */
	connectTimeoutMs: number
	/** One tools/call (MCP_CALL_TIMEOUT_MS). */
	callTimeoutMs: number
	/** Bytes of one HTTP response body from an MCP server (MCP_MAX_RESPONSE_BYTES). */
	maxResponseBytes: number
}

export const DEFAULT_LIMITS: McpLimits = { maxRounds: 8, connectTimeoutMs: 10_000, callTimeoutMs: 30_000, maxResponseBytes: 1024 * 1024 }

const positive = (v: string | undefined, fallback: number): number => {
	const n = Number(v)
	return v !== undefined && v !== '' && Number.isInteger(n) && n > 0 ? n : fallback
}

/** @example mcpLimits({ MCP_MAX_ROUNDS: '2' }).maxRounds === 2 */
export function mcpLimits(vars: Record<string, string | undefined>): McpLimits {
	return {
		maxRounds: positive(vars.MCP_MAX_ROUNDS, DEFAULT_LIMITS.maxRounds),
		connectTimeoutMs: positive(vars.MCP_CONNECT_TIMEOUT_MS, DEFAULT_LIMITS.connectTimeoutMs),
		callTimeoutMs: positive(vars.MCP_CALL_TIMEOUT_MS, DEFAULT_LIMITS.callTimeoutMs),
		maxResponseBytes: positive(vars.MCP_MAX_RESPONSE_BYTES, DEFAULT_LIMITS.maxResponseBytes),
	}
}
