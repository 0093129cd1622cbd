/**
 * `bun bench/upload.ts [--db postgres|pglite] [--mb 20] [--rounds 5] [--json]`: what a large upload costs everyone
 * else. A 20 MB file goes to /v1/audio/transcriptions (curl, a process of its own) while this process asks the gateway
 * for `GET /v1/models` back to back; printed: the slowest of those answers during the upload against the slowest while
 * idle, and the upload's own time through the gateway (with those requests, and alone) against straight to the mock.
 * Two files: a WAV (its length is read from the header) and bytes of no known format (every format's reader walks
 * them, as for an MP3). `--json`: a chat request of that size instead (a base64 image, on the fast path, its output
 * cap lowered by the gateway, so its body is changed on the way).
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { wavBytes } from '../test/helpers/wav'
import { MODELS, startRig } from './gateway'

const arg = (name: string, fallback: string) => {
	const i = process.argv.indexOf(`--${name}`)
	return i === -1 ? fallback : process.argv[i + 1]!
}
const db = arg('db', 'postgres') as 'postgres' | 'pglite'
const mb = Number(arg('mb', '20'))
const rounds = Number(arg('rounds', '5'))
const json = process.argv.includes('--json')
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const dir = mkdtempSync(join(tmpdir(), 'sb-bench-upload-'))
const size = mb * 1024 * 1024
/** A 16 kHz WAV of `bytes` of noise (test/helpers/wav.ts's header; noise so no compression or search is flattered). */
function wav(bytes: number): Uint8Array {
	const out = wavBytes(bytes)
	for (let i = 44; i < out.length; i += 65_536) crypto.getRandomValues(out.subarray(i, Math.min(i + 65_536, out.length)))
	return out
}
const files = { wav: join(dir, 'speech.wav'), unknown: join(dir, 'speech.bin') }
await Bun.write(files.wav, wav(size))
await Bun.write(files.unknown, wav(size).subarray(44))
const chatFile = join(dir, 'chat.json')
if (json) {
	const image = Buffer.from(crypto.getRandomValues(new Uint8Array(65_535))).toString('base64')
	const data = image.repeat(Math.ceil((size * 0.98) / image.length)).slice(0, Math.floor((size * 0.98) / 4) * 4)
	const content = [{ type: 'text', text: 'What is in this screenshot?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }]
	await Bun.write(chatFile, JSON.stringify({ model: MODELS.openai, max_tokens: 100_000, messages: [{ role: 'user', content }] }))
}

const rig = await startRig(db, postgresUrl)
const gateway = `http://127.0.0.1:${rig.gw.port}`
const direct = `http://127.0.0.1:${rig.ports.openai}`

/** Asks for the model list until `until` settles; the latencies in ms. */
async function probe(until: Promise<unknown>): Promise<number[]> {
	let done = false
	void until.finally(() => (done = true))
	const took: number[] = []
	while (!done) {
		const t = performance.now()
		const res = await fetch(`${gateway}/v1/models`, { headers: { authorization: `Bearer ${rig.gw.key}` } })
		await res.arrayBuffer()
		if (!res.ok) throw new Error(`GET /v1/models: ${res.status}`)
		took.push(performance.now() - t)
	}
	return took
}

/** One upload by curl (a form, or with `json` the chat request); its time in ms (the HTTP status must be 200). */
async function upload(base: string, key: string, file: string, type: string): Promise<number> {
	const t = performance.now()
	const what = type === 'application/json' ? ['-H', `content-type: ${type}`, '--data-binary', `@${file}`, `${base}/v1/chat/completions`] : ['-F', 'model=whisper-1', '-F', `file=@${file};type=${type}`, `${base}/v1/audio/transcriptions`]
	const curl = Bun.spawn(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `authorization: Bearer ${key}`, ...what])
	const status = (await new Response(curl.stdout).text()).trim()
	if (status !== '200') throw new Error(`upload to ${base}: HTTP ${status}`)
	return performance.now() - t
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fmt = (ms: number) => `${ms.toFixed(1)} ms`

try {
	console.log(`# ${mb} MB ${json ? 'chat requests to /v1/chat/completions' : 'uploads to /v1/audio/transcriptions'} on ${db}, ${rounds} rounds each (median of the rounds)`)
	const cases = json ? ([['chat with a base64 image', chatFile, 'application/json']] as const) : ([['wav', files.wav, 'audio/wav'], ['unknown format', files.unknown, 'application/octet-stream']] as const)
	for (const [label, file, type] of cases) {
		const idle: number[] = []
		const busy: number[] = []
		const via: number[] = []
		const alone: number[] = []
		const straight: number[] = []
		for (let r = 0; r < rounds; r++) {
			idle.push(Math.max(...(await probe(Bun.sleep(1000)))))
			const sent = upload(gateway, rig.gw.key, file, type)
			busy.push(Math.max(...(await probe(sent))))
			via.push(await sent)
			alone.push(await upload(gateway, rig.gw.key, file, type))
			straight.push(await upload(direct, 'bench-upstream-key', file, type))
		}
		console.log(`${label}: slowest other request while idle ${fmt(median(idle))}, during the upload ${fmt(median(busy))}; upload ${fmt(median(via))} through the gateway (${fmt(median(alone))} with no other requests), ${fmt(median(straight))} straight to the mock`)
	}
} finally {
	await rig.stop()
	rmSync(dir, { recursive: true, force: true })
}
