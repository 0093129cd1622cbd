/**
 * The harness's own parts that could silently lie: the response checks, the percentiles, the raw HTTP client and
 * the GC log's totals, the targets' verdicts, which build an A/B run starts, the options, how a perf profile is named and
 * summed, and what a slow request's time is charged to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'
import { parseBuild } from './ab'
import { parseJitdump, perfMap } from './jitdump'
import { aggregate, jsFunction } from './perf-profile'
import { inFlight, parseTimehist } from './tail'
import { smaps } from './mem-map'
import { checkResponse } from './checks'
import { feedGcLine, gcTotals, isGcLogLine, newGcLog } from './gc-log'
import { encodeRequest, openConn } from './http-client'
import { type Row, verdicts } from './report'
import { percentiles } from './stats'
import { DEFAULT_PRIME_S, type Options, parseOptions } from './options'

describe('checkResponse', () => {
	const usage = '"usage":{"prompt_tokens":1,"completion_tokens":2}'
	it('should accept a chat stream that ends with [DONE] and carries usage', () => {
		expect(checkResponse('chat-sse', 200, `data: {"choices":[],${usage}}\n\ndata: [DONE]\n\n`)).toBeUndefined()
	})
	it('should accept a plain chat stream (usage not asked for) only without usage', () => {
		expect(checkResponse('chat-sse-plain', 200, 'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n')).toBeUndefined()
		expect(checkResponse('chat-sse-plain', 200, 'data: {"choices":[],"usage":null}\n\ndata: [DONE]\n\n')).toBe('usage the client did not ask for')
		expect(checkResponse('chat-sse-plain', 200, 'data: {"choices":[]}\n\n')).toBe('no [DONE] at the end')
	})
	it('should reject a chat stream cut before [DONE]', () => {
		expect(checkResponse('chat-sse', 200, `data: {"choices":[],${usage}}\n\n`)).toBe('no [DONE] at the end')
	})
	it('should reject a messages stream without message_stop at the end', () => {
		const body = 'event: message_delta\ndata: {"usage":{"output_tokens":3}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\nevent: ping\ndata: {}\n\n'
		expect(checkResponse('messages-sse', 200, body)).toBe('no message_stop at the end')
	})
	it('should reject a body without usage, and any non-200 status', () => {
		expect(checkResponse('chat-json', 200, '{"choices":[]}')).toBe('no usage')
		expect(checkResponse('chat-json', 500, `{${usage}}`)).toBe('status 500')
	})
})

describe('percentiles', () => {
	it('should return nearest-rank percentiles', () => {
		const p = percentiles(Array.from({ length: 100 }, (_, i) => i + 1))
		expect([p.p50, p.p90, p.p99, p.max, p.n]).toEqual([50, 90, 99, 100, 100])
	})
})

describe('openConn', () => {
	let listener: TCPSocketListener<undefined>
	// A raw server, so the response can arrive split at awkward places (inside the head, inside a chunk size).
	const pieces = ['HTTP/1.1 200 OK\r\ntransfer-enc', 'oding: chunked\r\n\r\n5\r\nhel', 'lo\r\n', '6', '\r\n world\r\n0\r\n\r\n']
	const send = async (s: Socket<undefined>) => {
		for (const p of pieces) {
			s.write(p)
			await Bun.sleep(5)
		}
	}
	beforeAll(() => {
		listener = Bun.listen({
			hostname: '127.0.0.1',
			port: 0,
			socket: {
				data(s, buf) {
					const text = buf.toString()
					if (text.includes('/length')) s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok')
					else void send(s)
				},
			},
		})
	})
	afterAll(() => listener.stop(true))

	it('should decode a chunked body split at arbitrary points and keep the connection', async () => {
		const c = await openConn(listener.port)
		const req = encodeRequest(listener.port, '/chunked', {}, '{}')
		const first = await c.send(req, performance.now())
		expect(first).toMatchObject({ status: 200, body: 'hello world', error: undefined })
		expect(first.ttfbMs).toBeLessThanOrEqual(first.totalMs)
		expect((await c.send(req, performance.now())).body).toBe('hello world')
		expect(c.alive).toBe(true)
		c.close('done')
	})

	it('should read a content-length body and close when the server says so', async () => {
		const c = await openConn(listener.port)
		const r = await c.send(encodeRequest(listener.port, '/length', {}, ''), performance.now())
		expect(r).toMatchObject({ status: 200, body: 'ok' })
		expect(c.alive).toBe(false)
	})
})

describe('GC log', () => {
	const heap = '[GC<0x59fee608118>:'
	// As BUN_JSC_logGC=1 prints them (middles shortened): a short cycle on one line, a longer one over two, and a
	// full collection a timer started (no "Requesting GC" line before it).
	const before = [`${heap} START M 8928kb => EdenCollection, a=0kb hf=0.000 i#1:N<CsMsr> 33+0 => 285kb, p=1.697736ms (max 1.697736), cycle 1.639628ms END]`, 'GC END!']
	const window = [
		'Requesting GC because bytes allocated this cycle: 22199031 exceed bytes allowed: 22196953 normal bytes: 22199031 oversized bytes: 0',
		`${heap} START M 28741kb => EdenCollection, a=0kb ... p=1.192344ms (max 5.831469)...]`,
		`${heap} M a=40kb v=88kb (C:88 M:0 P1:0) ... => 17063kb, p=6.428020ms (max 6.428020), cycle 5.851204ms END]`,
		'GC END!',
		`${heap} epilogue 0.032360ms]`,
		`${heap} START M 20000kb => FullCollection, a=0kb v=202kb ... => 9000kb, p=2.500000ms (max 6.428020), cycle 2.500000ms END]`,
	]

	it('should count allocation from one collection to the next start, and sum cycle times', () => {
		const log = newGcLog()
		for (const l of [...before, ...window]) feedGcLine(log, l)
		// (8928 − 0) + (28741 − 285) + (20000 − 17063) kB
		expect(gcTotals(log)).toEqual({ allocatedBytes: (8928 + 28456 + 2937) * 1024, gcMs: 9.990832, cycles: 3 })
	})

	it('should carry the size after the last collection into a window that starts between collections', () => {
		const log = newGcLog()
		for (const l of before) feedGcLine(log, l)
		const t0 = gcTotals(log)
		for (const l of window) feedGcLine(log, l)
		const t1 = gcTotals(log)
		expect(t1.allocatedBytes - t0.allocatedBytes).toBe((28456 + 2937) * 1024)
		expect(t1.cycles - t0.cycles).toBe(2)
		expect(t1.gcMs - t0.gcMs).toBeCloseTo(8.351204, 9)
	})

	it('should keep each heap apart (a Worker has its own) and tell GC lines from the program\'s', () => {
		const log = newGcLog()
		for (const l of before) feedGcLine(log, l)
		feedGcLine(log, '[GC<0x7000>: START C 5000kb => EdenCollection, a=0kb => 1000kb, p=0.5ms (max 0.5), cycle 1.000000ms END]')
		feedGcLine(log, 'START M 99999kb => 1kb, p=1ms (max 1), cycle 99ms END]')
		feedGcLine(log, `${heap} START M 1285kb => EdenCollection, a=0kb => 300kb, p=0.4ms (max 1.697736), cycle 0.400000ms END]`)
		expect(gcTotals(log)).toEqual({ allocatedBytes: (8928 + 5000 + 1000) * 1024, gcMs: 3.039628, cycles: 3 })
		expect([...before, ...window].every(isGcLogLine)).toBe(true)
		expect(isGcLogLine('{"level":"error","msg":"GC failed"}')).toBe(false)
	})
})

describe('verdicts', () => {
	const row = (target: Row['target'], p50: number, p99: number): Row => ({
		scenario: 'chat-sse-c1', target, rps: 1000, p50, p99, ttfb50: p50, ttfb99: p99, cpu: 100, mainCpu: 80, mockCpu: 50,
		peakRssMb: 100, rssBeforeMb: 90, rssAfterMb: 90, hwmMb: 100, failed: 0, problems: [],
	})
	it('should judge added latency against direct and show the bare proxy figure beside it', () => {
		const v = verdicts([row('direct', 0.2, 0.6), row('bare', 0.4, 2.1), row('sb-postgres', 0.45, 2.4)])
		const p99 = v.find((x) => x.target === 'sb-postgres chat-sse-c1: added p99 ≤ 1 ms')!
		expect(p99).toEqual({ target: 'sb-postgres chat-sse-c1: added p99 ≤ 1 ms', value: '+1.800 ms (bare proxy +1.500 ms)', ok: false })
		expect(v.find((x) => x.target === 'sb-postgres chat-sse-c1: added p50 ≤ 0.3 ms')).toMatchObject({ value: '+0.250 ms (bare proxy +0.200 ms)', ok: true })
	})
	it('should judge large-body scenarios against the bare proxy and keep them out of the standard peak', () => {
		const at = (scenario: string, target: Row['target'], cpu: number, peakRssMb: number): Row => ({ ...row(target, 1, 2), scenario, cpu, peakRssMb, hwmMb: peakRssMb })
		const v = verdicts([at('chat-sse-c64', 'sb-postgres', 200, 110), at('messages-agent-c16', 'bare', 300, 40), at('messages-agent-c16', 'sb-postgres', 1000, 160)])
		expect(v.find((x) => x.target === 'sb-postgres messages-agent-c16: cpu ≤ 2× bare')).toMatchObject({ ok: false })
		expect(v.find((x) => x.target === 'sb-postgres messages-agent-c16: peak RSS (no target)')).toMatchObject({ value: '160 MB', ok: undefined })
		expect(v.find((x) => x.target.startsWith('sb-postgres peak RSS ≤ 120 MB'))).toMatchObject({ ok: true })
	})
	it('should leave the floor out when the bare proxy did not run', () => {
		const v = verdicts([row('direct', 0.2, 0.6), row('sb-postgres', 0.45, 1.4)])
		expect(v.find((x) => x.target.endsWith('added p99 ≤ 1 ms'))).toMatchObject({ value: '+0.800 ms', ok: true })
	})
})

describe('parseBuild (bench/ab.ts)', () => {
	it('should read a checkout with its settings', () => {
		expect(parseBuild('/tmp/old@MIMALLOC_PURGE_DELAY=0,A=b=c')).toEqual({ label: '/tmp/old@MIMALLOC_PURGE_DELAY=0,A=b=c', dir: '/tmp/old', env: { MIMALLOC_PURGE_DELAY: '0', A: 'b=c' } })
	})
	it('should start the bare proxy for `bare`, and a proxy script for `proxy:`', () => {
		expect(parseBuild('bare').proxy).toEndWith('bench/bare-proxy.ts')
		expect(parseBuild('proxy:/tmp/p.ts@X=1')).toEqual({ label: 'proxy:/tmp/p.ts@X=1', proxy: '/tmp/p.ts', env: { X: '1' } })
	})
	it('should refuse a setting without a name', () => {
		expect(() => parseBuild('/tmp/old@=1')).toThrow('bad setting')
	})
})

/** A jitdump as JavaScriptCore writes it: the 40-byte header, then one JIT_CODE_LOAD record per entry. */
function jitdump(loads: { addr: number; size: number; name: string }[]): Uint8Array {
	const parts: Uint8Array[] = []
	const header = new DataView(new ArrayBuffer(40))
	header.setUint32(0, 0x4a695444, true)
	header.setUint32(4, 1, true)
	header.setUint32(8, 40, true)
	parts.push(new Uint8Array(header.buffer))
	for (const l of loads) {
		const name = new TextEncoder().encode(`${l.name}\0`)
		const rec = new DataView(new ArrayBuffer(56 + name.length + l.size))
		rec.setUint32(0, 0, true)
		rec.setUint32(4, rec.byteLength, true)
		rec.setBigUint64(24, BigInt(l.addr), true)
		rec.setBigUint64(32, BigInt(l.addr), true)
		rec.setBigUint64(40, BigInt(l.size), true)
		new Uint8Array(rec.buffer).set(name, 56)
		parts.push(new Uint8Array(rec.buffer))
	}
	return Buffer.concat(parts)
}

describe('jitdump → perf map', () => {
	it('should name each code load, a later load replacing an earlier one over the same addresses', () => {
		const buf = jitdump([
			{ addr: 0x1000, size: 0x40, name: 'JSC-Baseline: buildForeignKeys#AAAAAA' },
			{ addr: 0x2000, size: 0x10, name: 'JSC-Thunk: DefaultCall' },
			{ addr: 0x1020, size: 0x40, name: 'JSC-FTL: fastStream#BBBBBB' },
		])
		expect(parseJitdump(buf).map((l) => l.name)).toEqual(['JSC-Baseline: buildForeignKeys#AAAAAA', 'JSC-Thunk: DefaultCall', 'JSC-FTL: fastStream#BBBBBB'])
		expect(perfMap(parseJitdump(buf))).toBe('1020 40 JSC-FTL: fastStream#BBBBBB\n2000 10 JSC-Thunk: DefaultCall\n')
	})
	it('should refuse a file that is not a jitdump', () => {
		expect(() => parseJitdump(new Uint8Array(64))).toThrow('not a little-endian jitdump')
	})
})

describe('perf profile aggregation', () => {
	it('should take a JavaScript function name from compiled code, not from stubs', () => {
		expect(jsFunction('JSC-FTL: fastStream#AZlheR')).toBe('fastStream')
		expect(jsFunction('JSC-Baseline: #BHZHN2')).toBe('(anonymous)')
		expect(jsFunction('JSC-Thunk: DefaultCall')).toBeUndefined()
		expect(jsFunction('[unknown]')).toBeUndefined()
	})
	it('should charge main-thread samples to the innermost JavaScript function, split by where the leaf ran', () => {
		const script = [
			'bun \n\t ffffffff81000000 tcp_sendmsg ([kernel.kallsyms])\n\t 1b8adda [unknown] (/usr/lib/node_modules/bun/bin/bun.exe)\n\t 7fe5b5ce38aa JSC-Thunk: DefaultCall (/tmp/perf-1.map)\n\t 7fe5b5ce38ab JSC-FTL: pull#AAA (/tmp/perf-1.map)\n\t 7fe5b5ce38ac JSC-FTL: respond#BBB (/tmp/perf-1.map)',
			'bun \n\t 183cff1 [unknown] (/usr/lib/node_modules/bun/bin/bun.exe)\n\t 7fe5b5ce38ab JSC-FTL: pull#AAA (/tmp/perf-1.map)',
			'bun \n\t 7fe5b5ce38ab JSC-FTL: pull#AAA (/tmp/perf-1.map)',
			'bun \n\t 183cff1 [unknown] (/usr/lib/node_modules/bun/bin/bun.exe)\n\t 2724a __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)',
			'HTTP Client \n\t ffffffff81000000 tcp_recvmsg ([kernel.kallsyms])',
		].join('\n\n')
		const a = aggregate(script, 'bun')
		expect(a.total).toBe(5)
		expect(a.threads.get('HTTP Client')).toEqual({ n: 1, kernel: 1, native: 0, jit: 0, other: 0 })
		expect(a.threads.get('bun')).toEqual({ n: 4, kernel: 1, native: 2, jit: 1, other: 0 })
		expect(a.functions.get('pull')).toEqual({ n: 3, kernel: 1, native: 1, jit: 1, other: 0 })
		expect([...a.functions.keys()]).toEqual(['pull', '(no JavaScript on the stack: event loop, I/O, collector)'])
		expect(aggregate(script, 'bun', 2).functions.get('pull < respond')).toEqual({ n: 1, kernel: 1, native: 0, jit: 0, other: 0 })
	})
})

describe('tail attribution (bench/tail.ts)', () => {
	const hist = [
		'           time    cpu  task name                       wait time  sch delay   run time',
		'                        [tid/pid]                          (msec)     (msec)     (msec)',
		'--------------- ------  ------------------------------  ---------  ---------  ---------',
		'     100.001000 [0000]  bun.exe[500]                        0.000      0.200      0.800 ',
		'     100.002000 [0001]  HTTP Client[501/500]                0.000      0.000      0.500 ',
		'     100.003000 [0000]  <idle>                              0.000      0.000      1.000 ',
		'     100.004000 [0001]  postgres[77]                        0.000      0.000      1.900 ',
		'     100.009000 [0000]  bun.exe[500]                        4.000      1.000      1.000 ',
	].join('\n')
	const label = (comm: string, pid: number) => (pid === 500 ? `gateway ${comm}` : comm)

	it('should read each run with its thread named by process, idle CPUs included', () => {
		const runs = parseTimehist(hist, label)
		expect(runs.map((r) => r.task)).toEqual(['gateway bun.exe', 'gateway HTTP Client', '<idle>', 'postgres', 'gateway bun.exe'])
		const first = runs[0]!
		expect(first.start).toBeCloseTo(100.0002, 6)
		expect(first.end).toBeCloseTo(100.001, 6)
		expect(first.schedDelay).toBeCloseTo(0.0002, 6)
	})

	it("should sum per request what ran while it was in flight, and the main thread's wait for a CPU", () => {
		const runs = parseTimehist(hist, label)
		// In flight from 100.0015 to 100.0085: half of the HTTP client's run, all of postgres's, the idle ms, and the main
		// thread's wait from 100.007 (woken) to 100.008 (on a CPU) plus 0.5 ms of its run.
		const p = inFlight([{ from: 100.0015, to: 100.0085 }], runs, 'gateway bun.exe')
		expect(p.requests).toBe(1)
		expect(p.meanMs).toBeCloseTo(7, 6)
		expect(Object.fromEntries(p.byTask.map((t) => [t.task, Number(t.ms.toFixed(6))]))).toEqual({
			postgres: 1.9,
			'<idle>': 1,
			'gateway HTTP Client': 0.5,
			'gateway bun.exe': 0.5,
		})
		expect(p.mainDelayMs).toBeCloseTo(1, 6)
		expect(p.byTask[0]!.task).toBe('postgres')
		// Two requests: the second overlaps only the main thread's last run. Each task's share of the requests it ran in.
		const two = inFlight([{ from: 100.0015, to: 100.0085 }, { from: 100.0085, to: 100.009 }], runs, 'gateway bun.exe')
		expect(Object.fromEntries(two.byTask.map((t) => [t.task, t.share]))).toEqual({ postgres: 0.5, '<idle>': 0.5, 'gateway HTTP Client': 0.5, 'gateway bun.exe': 1 })
		// Nothing in flight: nothing charged.
		expect(inFlight([{ from: 99, to: 99.5 }], runs, 'gateway bun.exe').byTask).toEqual([])
		// A run that began long before the request (a CPU idle for 300 ms) still overlaps it.
		const long = parseTimehist(`     101.000000 [0001]  <idle>                              0.000      0.000    300.000 \n${hist}`, label)
		expect(inFlight([{ from: 100.95, to: 100.96 }], long, 'gateway bun.exe').byTask.map((t) => [t.task, Number(t.ms.toFixed(6))])).toEqual([['<idle>', 10]])
	})
})

describe('memory by mapping (bench/mem-map.ts)', () => {
	it('should sum resident kB per mapping, naming anonymous ones by size and start', () => {
		const text = [
			'7f0000000000-7f0008000000 rw-p 00000000 00:00 0 ',
			'Size:             131072 kB',
			'Rss:               31000 kB',
			'55d000000000-55d004e00000 r-xp 00000000 08:01 1234                       /usr/bin/bun',
			'Rss:               40000 kB',
			'55d004e00000-55d005000000 r--p 04e00000 08:01 1234                       /usr/bin/bun',
			'Rss:                1000 kB',
		].join('\n')
		expect([...smaps(text)]).toEqual([
			['[anon] 128M@7f00000', 31000],
			['/usr/bin/bun 78M@55d0000', 40000],
			['/usr/bin/bun 2M@55d004e', 1000],
		])
	})
})

describe('options', () => {
	it('should prime each target 10 s by default, and as long as --prime says (0: not at all)', () => {
		expect((parseOptions([]) as Options).primeMs).toBe(DEFAULT_PRIME_S * 1000)
		expect(DEFAULT_PRIME_S).toBe(10)
		expect((parseOptions(['--prime', '2.5']) as Options).primeMs).toBe(2500)
		expect((parseOptions(['--prime', '0']) as Options).primeMs).toBe(0)
		expect(() => parseOptions(['--prime=-1'])).toThrow('--prime must be a number ≥ 0')
	})
})
