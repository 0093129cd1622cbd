/**
 * What opencode and its fork Kilo Code send alike, as recorded from both CLIs: the `read` tool's schema as the AI SDK
 * writes it from zod (draft 2020-12, integers bounded to safe integers) and the text its result carries back.
 */

export const MAX_INT = 9007199254740991

export const READ_SCHEMA = {
	$schema: 'https://json-schema.org/draft/2020-12/schema',
	type: 'object',
	properties: {
		filePath: { type: 'string', description: 'The absolute path to the file or directory to read' },
		offset: { minimum: 0, type: 'integer', maximum: MAX_INT, description: 'The line number to start reading from (1-indexed)' },
		limit: { minimum: 0, type: 'integer', maximum: MAX_INT, description: 'The maximum number of lines to read (defaults to 2000)' },
	},
	required: ['filePath'],
}

/** The `read` tool's result for a one-line file holding "hello". */
export const readOutput = (file: string) => `<path>${file}</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file - total 1 lines)\n</content>`
