/**
 * PGlite loads its WebAssembly and file-system bundle from beside its own module. In a `bun build --compile`
 * binary there is no node_modules, so these imports embed the files into the executable and hand them over.
 * Under `bun run` the same imports resolve to the files in node_modules.
 */
import initdbWasmPath from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import fsBundlePath from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }
import pgliteWasmPath from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }
import imagePath from './pglite-image.tar.gz' with { type: 'file' }

/** A freshly initialised data directory (scripts/pglite-image.ts): what a new DATA_DIR starts from. */
export const pgliteImage = () => Bun.file(imagePath)

let cached: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined

export function loadPgliteAssets() {
	cached ??= (async () => ({
		pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasmPath).arrayBuffer()),
		initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasmPath).arrayBuffer()),
		fsBundle: Bun.file(fsBundlePath),
	}))()
	return cached
}
