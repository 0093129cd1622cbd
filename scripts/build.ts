/**
 * `bun run build`: one self-contained executable at dist/switchboard. Migrations (src/db/migrations.gen.ts), PGlite's
 * WebAssembly and file-system bundle (src/db/pglite-assets.ts) and the console assets are embedded, so the binary
 * runs on a machine with nothing else installed. The PGlite thread's entry point (src/db/pglite-worker.ts) is built in
 * as a second entry point: a worker's script must be, to be found inside the executable.
 */
const outfile = process.argv[2] ?? 'dist/switchboard'
const proc = Bun.spawnSync([process.execPath, 'build', '--compile', '--minify', '--sourcemap', 'src/index.ts', 'src/db/pglite-worker.ts', '--outfile', outfile], {
	cwd: new URL('..', import.meta.url).pathname,
	stdout: 'inherit',
	stderr: 'inherit',
})
process.exit(proc.exitCode ?? 1)
