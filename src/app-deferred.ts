/**
 * The feature modules loaded only when a request first needs one (src/http/deferred-app.ts): the task APIs
 * (Midjourney, Suno, video), audio and images, batches, Gemini's side APIs (files, caches, batches, interactions),
 * conversations, legacy completions, stored chat completions, and the WebSocket APIs (OpenAI's Realtime, Gemini
 * Live, the Responses socket: each upgrades in a GET route through `server.upgrade`, so any app that can reach the
 * server can serve them). What stays in src/app.ts is what most gateways serve all day (chat, messages, responses,
 * Gemini's generateContent, embeddings, the models list, health, metrics, the management API and console) and the routes whose
 * paths the main app's would otherwise take (Gemini's operations under its models' wildcard; the files routes, which
 * OpenAI's, Anthropic's and Gemini's APIs share). A request reaches these only when no route of the main app serves
 * its method and path.
 * The OpenAPI generator mounts these with the rest (scripts/openapi-doc.ts).
 * @module
 */
import { type AnyElysia, Elysia } from 'elysia'
import { audioModule } from './modules/audio'
import { batchesModule } from './modules/batches'
import { storedChatModule } from './modules/chat-stored'
import { completionsModule } from './modules/completions'
import { conversationsModule } from './modules/conversations'
import { geminiBatchesModule } from './modules/gemini-batches'
import { geminiCachesModule } from './modules/gemini-caches'
import { geminiFilesModule } from './modules/gemini-files'
import { imagesModule } from './modules/images'
import { interactionsModule } from './modules/interactions'
import { liveModule } from './modules/live'
import { messageBatchesModule } from './modules/message-batches'
import { mjModule } from './modules/mj'
import { realtimeModule } from './modules/realtime'
import { responsesSocketModule } from './modules/responses/socket'
import { sunoModule } from './modules/suno'
import { videoModule } from './modules/video'
import { videosApiModule } from './modules/video/videos-api'
import type { Services } from './services'

/**
 * One plugin with all of them; its hooks run after the guard of the app that uses it. `handle` serves a request with
 * the whole gateway (each message of a Responses socket is served by POST /v1/responses, socket.ts).
 */
export function deferredModules(svc: Services, handle: (request: Request) => Promise<Response>): AnyElysia {
	const app: AnyElysia = new Elysia({ name: 'deferred-modules' })
	for (const m of [
		completionsModule,
		conversationsModule,
		batchesModule,
		imagesModule,
		audioModule,
		videoModule,
		videosApiModule,
		mjModule,
		sunoModule,
		storedChatModule,
		messageBatchesModule,
		geminiBatchesModule,
		interactionsModule,
		geminiFilesModule,
		geminiCachesModule,
		realtimeModule,
		liveModule,
	] as const)
		app.use(m(svc))
	return app.use(responsesSocketModule(svc, handle))
}
