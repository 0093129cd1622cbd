/**
 * The official SDKs as a page loads them (bundled for the browser by cors.test.ts with `Bun.build`): what a web app
 * calling the gateway from the user's browser runs.
 */
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'

Object.assign(globalThis, { sdks: { OpenAI, Anthropic, GoogleGenAI } })
