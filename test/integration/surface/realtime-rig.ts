/**
 * The realtime tests' set-up: the Realtime mock, a gateway with channels on it, and the same gateway served over TLS
 * as well (the `openai` SDK's `OpenAIRealtimeWS` connects with `wss:`, so its tests reach the gateway there).
 */
import { createApp } from '../../../src/app'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'

const FIXTURES = new URL('../../fixtures/tls', import.meta.url).pathname

export type RealtimeRig = { rt: RealtimeMock; app: TestApp; tls: ReturnType<ReturnType<typeof createApp>['listen']> }

/** The mock (upstream key `up-rt`), a gateway configured by `config(mock URL)`, and its TLS listener. */
export async function startRealtimeRig(config: (rtUrl: string) => GatewayConfig): Promise<RealtimeRig> {
	const rt = await startRealtimeMock({ apiKey: 'up-rt' })
	const app = await startTestApp({ config: config(rt.url) })
	const tls = createApp(app.svc).listen({ port: 0, hostname: '127.0.0.1', tls: { cert: Bun.file(`${FIXTURES}/pics.example.crt`), key: Bun.file(`${FIXTURES}/pics.example.key`) } })
	return { rt, app, tls }
}

export async function stopRealtimeRig(r: RealtimeRig | undefined): Promise<void> {
	await r?.tls.stop(true)
	await r?.app.close()
	await r?.rt.stop()
}
