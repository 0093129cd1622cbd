// Files imported `with { type: 'file' }` resolve to a path (embedded in compiled binaries).
declare module '*.wasm' {
	const path: string
	export default path
}
declare module '*.data' {
	const path: string
	export default path
}
declare module '*.tiktoken' {
	const path: string
	export default path
}
declare module '*.tar.gz' {
	const path: string
	export default path
}
