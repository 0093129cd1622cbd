/** Sign-in (and self sign-up when an administrator allows it). */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { Logo } from '../components/icons'
import { Alert, Button, TextField } from '../components/ui'
import { useAction } from '../hooks'
import type { SessionInfo } from '../types'

export function SignIn({ signupEnabled, notice, onSignedIn }: { signupEnabled: boolean; notice?: string; onSignedIn: (s: SessionInfo) => void }) {
	const [mode, setMode] = useState<'signin' | 'signup'>('signin')
	const [username, setUsername] = useState('')
	const [password, setPassword] = useState('')
	const send = useAction()
	const signup = mode === 'signup'
	const submit = send.submit(async () => onSignedIn(await api<SessionInfo>('POST', signup ? '/api/signup' : '/api/session', { username: username.trim(), password })))

	return (
		<main class="auth" id="main">
			<div class="auth-card">
				<div class="auth-brand">
					<Logo size={40} />
					<div>
						<h1>Switchboard</h1>
						<p class="muted">{signup ? 'Create your account' : 'Sign in to the console'}</p>
					</div>
				</div>
				{notice && !send.error && <Alert kind="info">{notice}</Alert>}
				{send.error && <Alert>{send.error}</Alert>}
				<form onSubmit={submit} class="stack">
					<TextField label="Username" value={username} onValue={setUsername} autoComplete="username" required autoFocus name="username" autoCapitalize="none" spellcheck={false} />
					<TextField
						label="Password"
						type="password"
						value={password}
						onValue={setPassword}
						autoComplete={signup ? 'new-password' : 'current-password'}
						required
						name="password"
						minLength={signup ? 8 : undefined}
						hint={signup ? 'At least 8 characters, not all spaces.' : undefined}
					/>
					<Button type="submit" variant="primary" busy={send.busy} class="btn-block">
						{signup ? 'Create account' : 'Sign in'}
					</Button>
				</form>
				{signupEnabled && (
					<p class="auth-switch">
						{signup ? 'Have an account? ' : 'New here? '}
						<button
							type="button"
							class="link"
							onClick={() => {
								setMode(signup ? 'signin' : 'signup')
								send.clearError()
							}}
						>
							{signup ? 'Sign in' : 'Create an account'}
						</button>
					</p>
				)}
				<p class="auth-foot">
					<a href="/pricing">Models and prices</a>
				</p>
			</div>
		</main>
	)
}
