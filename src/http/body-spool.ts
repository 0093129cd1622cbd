/**
 * Large upload bodies written to a file as they arrive, and read from it. Bun's `request.blob()` takes a 20 MB body in
 * with copies that hold the event loop: every other request in flight waited 80–90 ms (`bun bench/upload.ts`). Read
 * as a stream into a file, giving way to other requests every MiB, they wait 20–25 ms, the upload itself is faster,
 * and its bytes are not in the heap. The file's Blob is read lazily: a form cut into slices of it (multipart.ts) reads
 * a file part from disk only as it is sent upstream.
 *
 * A file lives as long as its request: removed once the answer has gone (`releaseSpool`, an Elysia afterResponse
 * hook), or when the request is collected if that hook never ran for it; what a crashed process left is removed when
 * the next one starts (`sweepSpool`). Files are named by path, never kept open by number: a late read of one removed
 * fails, rather than reading whatever file got its descriptor next.
 * @module
 */
import type { FileSink } from 'bun'
import { lstat, mkdir, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GatewayError } from '../core/errors'
import { withinDeadline } from './body-deadline'

/** Bodies this large or larger, or of no declared length, go to a file; smaller ones are read in memory, natively. */
export const SPOOL_MIN_BYTES = 1024 * 1024

/** How much is read between two turns of other requests. */
const YIELD_BYTES = 1024 * 1024

/**
 * Where upload bodies are spooled: `$TMPDIR/switchboard-uploads-<uid>`, shared by this user's instances on the
 * machine. Used only as a directory of this user's that no one else may enter (`ownDir`).
 */
export const spoolDir = (): string => join(tmpdir(), `switchboard-uploads-${process.getuid?.() ?? 0}`)

/** The files spooled for a request (an Azure deployment's upload is read twice: as it came, and as the /v1 request). */
const spooled = new WeakMap<Request, string[]>()
const leftBehind = new FinalizationRegistry<string[]>((paths) => void removeAll(paths))

/**
 * The request's body as a Blob: in memory when small (`request.blob()`), else in a file of the spool; either read
 * under the request's body deadline when body-deadline.ts put it there (past it the read stops and the file goes). A
 * spool directory that cannot be had (a read-only file system, a name another user took) leaves bodies in memory.
 */
export async function bodyBlob(request: Request): Promise<Blob> {
	const length = request.headers.get('content-length')
	if ((length !== null && Number(length) < SPOOL_MIN_BYTES) || !request.body) return request.blob()
	const dir = await ownDir()
	if (!dir) return request.blob()
	const path = join(dir, `${process.pid}-${crypto.randomUUID()}`)
	const paths = spooled.get(request)
	if (paths) paths.push(path)
	else {
		const list = [path]
		spooled.set(request, list)
		leftBehind.register(request, list, request)
	}
	await spool(request, request.body, path)
	return Bun.file(path)
}

/** Copies the body into the file at `path`; on any failure (the deadline, the client gone, a full disk) the file is removed and the failure thrown. */
async function spool(request: Request, body: ReadableStream<Uint8Array>, path: string): Promise<void> {
	const reader = body.getReader()
	let sink: FileSink | undefined
	let stopped = false
	const copy = async () => {
		sink = Bun.file(path).writer({ highWaterMark: YIELD_BYTES })
		let since = 0
		for (;;) {
			const { done, value } = await reader.read()
			if (done || stopped) return
			sink.write(value)
			// What arrived while others ran waits in the stream's queue, and reads of a queue resolve without leaving the
			// microtask queue: a 20 MB body was read ~30 ms at a time with no other request served.
			if ((since += value.byteLength) >= YIELD_BYTES) {
				since = 0
				await new Promise((next) => setImmediate(next))
			}
		}
	}
	let failed: unknown
	try {
		await withinDeadline(request, copy())
	} catch (e) {
		failed = e
		stopped = true
		void reader.cancel().catch(() => {})
	}
	try {
		await sink?.end()
	} catch (e) {
		failed ??= e
	}
	if (failed === undefined) return
	await rm(path, { force: true }).catch(() => {})
	// A file system's refusal (ENOSPC, EACCES) is the gateway's to say; the deadline's and the client's are theirs.
	throw (failed as NodeJS.ErrnoException)?.syscall ? new GatewayError('unavailable', 'cannot store the upload to read it', { code: 'upload_spool_failed', detail: String(failed) }) : failed
}

/** Removes the files spooled for this request (its answer has gone). */
export function releaseSpool(request: Request): void {
	const paths = spooled.get(request)
	if (!paths) return
	spooled.delete(request)
	leftBehind.unregister(request)
	void removeAll(paths)
}

/**
 * At start: removes the files of processes no longer running (a crash, a kill -9), and any named by this process's
 * own id (in a container every start has the same one, and this process has spooled nothing yet).
 */
export async function sweepSpool(): Promise<void> {
	const dir = spoolDir()
	const names = await readdir(dir).catch(() => [] as string[])
	await removeAll(names.filter((name) => !running(Number(name.slice(0, name.indexOf('-'))))).map((name) => join(dir, name)))
}

const running = (pid: number) => {
	if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
	try {
		process.kill(pid, 0)
		return true
	} catch (e) {
		// EPERM: running, as another user.
		return (e as NodeJS.ErrnoException).code === 'EPERM'
	}
}

const removeAll = (paths: string[]) => Promise.all(paths.map((p) => rm(p, { force: true }).catch(() => {}))).then(() => {})

/**
 * The spool directory, made or found as this user's and closed to everyone else; undefined when it is not (in a shared
 * temporary directory another user could have taken the name first, as a directory of theirs or a link, to read the
 * uploads put in it). Looked at for every spooled body: a temporary directory's cleaner may remove it at any time.
 */
async function ownDir(): Promise<string | undefined> {
	const dir = spoolDir()
	try {
		await mkdir(dir, { recursive: true, mode: 0o700 })
		const st = await lstat(dir)
		return st.isDirectory() && st.uid === (process.getuid?.() ?? st.uid) && (st.mode & 0o077) === 0 ? dir : undefined
	} catch {
		return undefined
	}
}
