/**
 * A small MCP server for the tests, built with the official SDK (McpServer over the Web-standard Streamable HTTP
 * transport, stateful sessions) on 127.0.0.1: a weather tool, a clock tool, a tool that always throws, a tool that
 * answers more than the gateway's response cap, and a slow one. It records what it was asked and can require a
 * bearer token.
 * @module
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { z } from 'zod'

export type ToolCall = { name: string; args: Record<string, unknown> }

export type TestMcpServer = {
	/** `http://127.0.0.1:<port>/mcp` */
	url: string
	calls: ToolCall[]
	/** Runs at each tool call (tests use it to act between two model rounds). */
	onCall?: (call: ToolCall) => void
	/** `authorization` headers of every HTTP request, in order. */
	auth: Array<string | null>
	/** Sessions initialized / ended by DELETE. */
	opened: number
	closed: number
	reset(): void
	stop(): Promise<void>
}

/** Text the `big` tool answers: larger than any response cap the tests set. */
export const BIG_TEXT = 'x'.repeat(64 * 1024)

/** What the `pages` tool answers: `PAGES` texts of 5,000 words, each one token to the o200k count and to the mocks. */
export const PAGE = 'hello '.repeat(5_000).trim()
export const PAGES = 14

function buildServer(rec: TestMcpServer): McpServer {
	const server = new McpServer({ name: 'test-tools', version: '1.0.0' })
	const city = { city: z.string().describe('City name') }
	const log = (name: string, args: Record<string, unknown>) => {
		rec.calls.push({ name, args })
		rec.onCall?.({ name, args })
	}
	server.registerTool('get_weather', { description: 'Current weather in a city', inputSchema: city }, async (args) => {
		log('get_weather', args)
		return { content: [{ type: 'text', text: `Sunny in ${args.city}` }] }
	})
	server.registerTool('get_time', { description: 'Local time in a city', inputSchema: city }, async (args) => {
		log('get_time', args)
		return { content: [{ type: 'text', text: `Noon in ${args.city}` }] }
	})
	server.registerTool('explode', { description: 'Always fails', inputSchema: city }, async (args) => {
		log('explode', args)
		throw new Error(`boom for ${args.city}`)
	})
	server.registerTool('big', { description: 'A very large answer', inputSchema: city }, async (args) => {
		log('big', args)
		return { content: [{ type: 'text', text: BIG_TEXT }] }
	})
	server.registerTool('pages', { description: 'A long document', inputSchema: city }, async (args) => {
		log('pages', args)
		return { content: Array.from({ length: PAGES }, () => ({ type: 'text' as const, text: PAGE })) }
	})
	server.registerTool('slow', { description: 'Answers after 3 seconds', inputSchema: city }, async (args) => {
		log('slow', args)
		await Bun.sleep(3_000)
		return { content: [{ type: 'text', text: `Finally, ${args.city}` }] }
	})
	return server
}

/** Starts the server; with `token`, requests without `Authorization: Bearer <token>` get 401. */
export async function startMcpServer(opts: { token?: string } = {}): Promise<TestMcpServer> {
	const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>()
	const rec: TestMcpServer = {
		url: '',
		calls: [],
		auth: [],
		opened: 0,
		closed: 0,
		reset() {
			rec.onCall = undefined
			rec.calls.length = 0
			rec.auth.length = 0
			rec.opened = 0
			rec.closed = 0
		},
		stop: async () => {
			for (const t of sessions.values()) await t.close()
			bun.stop(true)
		},
	}
	const bun = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		idleTimeout: 30,
		async fetch(req) {
			if (new URL(req.url).pathname !== '/mcp') return new Response('not found', { status: 404 })
			rec.auth.push(req.headers.get('authorization'))
			if (opts.token && req.headers.get('authorization') !== `Bearer ${opts.token}`) return new Response('unauthorized', { status: 401 })
			const sid = req.headers.get('mcp-session-id')
			const known = sid ? sessions.get(sid) : undefined
			if (known) return known.handleRequest(req)
			if (sid) return new Response('unknown session', { status: 404 })
			const transport = new WebStandardStreamableHTTPServerTransport({
				sessionIdGenerator: () => crypto.randomUUID(),
				onsessioninitialized: (id) => {
					sessions.set(id, transport)
					rec.opened++
				},
				onsessionclosed: (id) => {
					sessions.delete(id)
					rec.closed++
				},
			})
			await buildServer(rec).connect(transport)
			return transport.handleRequest(req)
		},
	})
	rec.url = `http://127.0.0.1:${bun.port}/mcp`
	return rec
}
