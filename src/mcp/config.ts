/**
 * Bounds of the gateway's MCP client, from the environment (read at start with the other settings, config/env.ts): rounds of model calls per request, time to connect and list a server's tools, time per tool call, and the
 * largest HTTP body an MCP server may send back.
 * @module
 */
import { type EnvReader, MAX_TIMER_MS } from '../config/env-vars'

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

/** @example readMcpLimits(envReader({ MCP_MAX_ROUNDS: '2' })).maxRounds === 2 */
export function readMcpLimits(r: EnvReader): McpLimits {
	const ms = { min: 1, max: MAX_TIMER_MS }
	return {
		maxRounds: r.int('MCP_MAX_ROUNDS', DEFAULT_LIMITS.maxRounds, { min: 1 }),
		connectTimeoutMs: r.int('MCP_CONNECT_TIMEOUT_MS', DEFAULT_LIMITS.connectTimeoutMs, ms),
		callTimeoutMs: r.int('MCP_CALL_TIMEOUT_MS', DEFAULT_LIMITS.callTimeoutMs, ms),
		maxResponseBytes: r.int('MCP_MAX_RESPONSE_BYTES', DEFAULT_LIMITS.maxResponseBytes, { min: 1 }),
	}
}
