/**
 * The feature modules loaded only when a request first needs one (src/http/deferred-app.ts): the task APIs
 * (Midjourney, Suno, video), audio and images, batches, Gemini's side APIs (files, caches, batches, interactions),
 * conversations, legacy completions and stored chat completions. What stays in src/app.ts is what most gateways serve
 * all day (chat, messages, responses, Gemini's generateContent, embeddings, the models list, health, metrics, the
 * management API and console), the WebSocket routes, which the server must know when it starts, and the routes whose
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
import { messageBatchesModule } from './modules/message-batches'
import { mjModule } from './modules/mj'
import { sunoModule } from './modules/suno'
import { videoModule } from './modules/video'
import { videosApiModule } from './modules/video/videos-api'
import type { Services } from './services'

/** One plugin with all of them; its hooks run after the guard of the app that uses it. */
export function deferredModules(svc: Services): AnyElysia {
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
	] as const)
		app.use(m(svc))
	return app
}
