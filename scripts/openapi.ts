/** `bun run openapi`: writes openapi/openapi.json from the routes' schemas. */
import { buildOpenApiDocument } from './openapi-doc'

const out = new URL('../openapi/openapi.json', import.meta.url)
await Bun.write(out, await buildOpenApiDocument())
console.log(`wrote ${out.pathname}`)
